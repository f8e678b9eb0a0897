-- a non-buyer has no live sale as buyer, and every live user is either a
-- buyer or a non-buyer
with

non_buyers as (

    select user_id from {{ ref('dim_non_buyers') }}

),

buyers as (

    select distinct buyer_id as user_id from {{ ref('fct_sales') }}

),

users as (

    select user_id from {{ ref('stg_tickit__users') }}

)

select
    'non-buyer who bought' as failure,
    non_buyers.user_id
from non_buyers
inner join buyers
    on non_buyers.user_id = buyers.user_id

union all

select
    'live user neither buyer nor non-buyer' as failure,
    users.user_id
from users
left join non_buyers
    on users.user_id = non_buyers.user_id
left join buyers
    on users.user_id = buyers.user_id
where
    non_buyers.user_id is null
    and buyers.user_id is null
