with

sales as (

    select * from {{ ref('stg_tickit__sales') }}

),

listings as (

    select * from {{ ref('stg_tickit__listings') }}

),

deleted_listings as (

    {{ deleted_keys('listing', 'listing_id') }}

),

deleted_events as (

    {{ deleted_keys('event', 'event_id') }}

),

events as (

    select * from {{ ref('int_events_joined_to_venues_and_categories') }}

),

sales_joined as (

    select
        ----------  ids
        sales.sale_id,
        sales.listing_id,
        sales.event_id,
        events.category_id,
        events.venue_id,
        sales.seller_id,
        sales.buyer_id,
        sales.date_id,

        ----------  timestamps and dates
        sales.sold_at,
        cast(sales.sold_at as date) as sale_date,
        listings.listed_at,
        events.event_starts_at,

        ----------  strings
        {{ event_context_columns('events') }},

        ----------  numerics
        sales.quantity_sold,
        sales.price_paid,
        sales.commission,
        sales.ticket_price,
        sales.commission_percent,
        sales.earnings,

        ----------  lineage
        greatest(
            sales.bronze_commit_time,
            listings.bronze_commit_time,
            deleted_listings.bronze_commit_time,
            events.bronze_commit_time,
            deleted_events.bronze_commit_time
        ) as bronze_commit_time

    from sales
    left join listings
        on sales.listing_id = listings.listing_id
    left join deleted_listings
        on sales.listing_id = deleted_listings.listing_id
    left join events
        on sales.event_id = events.event_id
    left join deleted_events
        on sales.event_id = deleted_events.event_id

)

select * from sales_joined
