with

events as (

    select * from {{ ref('int_events_joined_to_venues_and_categories') }}

),

dates as (

    select * from {{ ref('stg_tickit__dates') }}

),

final as (

    select
        ----------  ids
        events.event_id,
        events.venue_id,
        events.category_id,
        events.date_id,

        ----------  strings
        events.event_name,
        events.venue_name,
        events.venue_city,
        events.venue_state,
        events.category_group,
        events.category_name,
        events.category_description,

        ----------  numerics
        events.seat_capacity,

        ----------  timestamps and dates
        events.event_starts_at,
        dates.calendar_date as event_date,
        dates.day_of_week as event_day_of_week,
        dates.is_holiday as is_on_holiday

    from events
    left join dates
        on events.date_id = dates.date_id

)

select * from final
