with

listings as (

    select * from {{ ref('stg_tickit__listings') }}

),

events as (

    select * from {{ ref('int_events_joined_to_venues_and_categories') }}

),

deleted_events as (

    {{ deleted_keys('event', 'event_id') }}

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
        {{ event_context_columns('events') }},

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
