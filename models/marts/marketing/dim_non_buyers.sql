with

users as (

    select * from {{ ref('stg_tickit__users') }}

),

buyers as (

    select * from {{ ref('int_buyers_extracted_from_users') }}

),

non_buyers as (

    select
        users.user_id,
        users.username,
        concat(users.last_name, ', ', users.first_name) as full_name,
        {{ user_profile_columns('users') }}

    from users
    left join buyers
        on users.user_id = buyers.user_id
    where buyers.user_id is null

)

select * from non_buyers
