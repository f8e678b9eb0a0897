with

events as (

    select * from {{ ref('stg_tickit__events') }}

),

venues as (

    select * from {{ ref('stg_tickit__venues') }}

),

categories as (

    select * from {{ ref('stg_tickit__categories') }}

),

deleted_venues as (

    {{ deleted_keys('venue', 'venue_id') }}

),

deleted_categories as (

    {{ deleted_keys('category', 'category_id') }}

),

events_joined as (

    select
        events.event_id,
        events.venue_id,
        events.category_id,
        events.date_id,
        events.event_name,
        events.event_starts_at,
        venues.venue_name,
        venues.venue_city,
        venues.venue_state,
        venues.seat_capacity,
        categories.category_group,
        categories.category_name,
        categories.category_description,
        -- a deleted venue or category changes the row too: its deletion
        -- commit counts (greatest skips nulls)
        greatest(
            events.bronze_commit_time,
            venues.bronze_commit_time,
            deleted_venues.bronze_commit_time,
            categories.bronze_commit_time,
            deleted_categories.bronze_commit_time
        ) as bronze_commit_time

    from events
    left join venues
        on events.venue_id = venues.venue_id
    left join deleted_venues
        on events.venue_id = deleted_venues.venue_id
    left join categories
        on events.category_id = categories.category_id
    left join deleted_categories
        on events.category_id = deleted_categories.category_id

)

select * from events_joined
