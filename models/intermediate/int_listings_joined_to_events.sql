with

listings as (

    select * from {{ ref('stg_tickit__listings') }}

),

events as (

    select * from {{ ref('int_events_joined_to_venues_and_categories') }}

),

deleted_records as (

    select * from {{ ref('stg_tickit__deleted_records') }}

),

deleted_events as (

    select
        record_id as event_id,
        bronze_commit_time
    from deleted_records
    where bronze_table = 'event'

),

listings_joined as (

    select
        ----------  ids
        listings.listing_id,
        listings.seller_id,
        listings.event_id,
        events.category_id,
        events.venue_id,
        listings.date_id,

        ----------  timestamps and dates
        listings.listed_at,
        cast(listings.listed_at as date) as listing_date,
        events.event_starts_at,

        ----------  strings
        events.event_name,
        events.category_group,
        events.category_name,
        events.venue_name,
        events.venue_city,
        events.venue_state,

        ----------  numerics
        listings.tickets_listed,
        listings.price_per_ticket,
        listings.total_price,

        ----------  lineage
        greatest(
            listings.bronze_commit_time,
            events.bronze_commit_time,
            deleted_events.bronze_commit_time
        ) as bronze_commit_time

    from listings
    left join events
        on listings.event_id = events.event_id
    left join deleted_events
        on listings.event_id = deleted_events.event_id

)

select * from listings_joined
