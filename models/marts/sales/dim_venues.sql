with

venues as (

    select * from {{ ref('stg_tickit__venues') }}

),

final as (

    select
        venue_id,
        venue_name,
        venue_city,
        venue_state,
        seat_capacity

    from venues

)

select * from final
