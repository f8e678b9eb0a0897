with

users as (

    select * from {{ ref('stg_tickit__users') }}

),

sales as (

    select * from {{ ref('stg_tickit__sales') }}

),

first_sales as (

    select
        seller_id,
        cast(min(sold_at) as date) as first_sale_date
    from sales
    group by seller_id

),

sellers as (

    select
        users.user_id,
        users.username,
        concat(users.last_name, ', ', users.first_name) as full_name,
        first_sales.first_sale_date,
        users.city,
        users.state,
        users.email,
        users.phone,
        users.likes_sports,
        users.likes_theatre,
        users.likes_concerts,
        users.likes_jazz,
        users.likes_classical,
        users.likes_opera,
        users.likes_rock,
        users.likes_vegas,
        users.likes_broadway,
        users.likes_musicals

    from users
    inner join first_sales
        on users.user_id = first_sales.seller_id

)

select * from sellers
