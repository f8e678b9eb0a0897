with

users as (

    select * from {{ ref('stg_tickit__users') }}

),

sales as (

    select * from {{ ref('stg_tickit__sales') }}

),

first_purchases as (

    select
        buyer_id,
        cast(min(sold_at) as date) as first_purchase_date
    from sales
    group by buyer_id

),

buyers as (

    select
        users.user_id,
        users.username,
        concat(users.last_name, ', ', users.first_name) as full_name,
        first_purchases.first_purchase_date,
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
    inner join first_purchases
        on users.user_id = first_purchases.buyer_id

)

select * from buyers
