{#- An anti join on the live sales' buyers: a non-buyer needs no first
    purchase date, so the buyers' aggregate and their join back to the users
    (int_buyers_extracted_from_users) would be work thrown away. -#}
with

users as (

    select * from {{ ref('stg_tickit__users') }}

),

sales as (

    select * from {{ ref('stg_tickit__sales') }}

),

non_buyers as (

    select
        users.user_id,
        users.username,
        concat(users.last_name, ', ', users.first_name) as full_name,
        {{ user_profile_columns('users') }}

    from users
    left anti join sales
        on users.user_id = sales.buyer_id

)

select * from non_buyers
