{#- One row per live sale; an incremental run merges the sales whose bronze
    rows (the sale, its listing, event, venue, category) were committed since
    the last run and deletes the sales soft-deleted since (incremental_fact). -#}
{{ incremental_fact(
    ref('int_sales_joined_to_listings_and_events'),
    base=ref('stg_tickit__sales'),
    joined={
        'listing_id': ['listing', 'stg_tickit__listings'],
        'event_id': ['event', 'int_events_joined_to_venues_and_categories'],
    },
    compare_joined=['event_id'],
    bronze_table='sales',
    key_column='sale_id',
    fact_key='sale_key',
    columns=[
        'listing_id', 'event_id', 'category_id', 'venue_id', 'seller_id',
        'buyer_id', 'date_id',
        'sold_at', 'sale_date', 'listed_at', 'event_starts_at',
        'event_name', 'category_group', 'category_name', 'venue_name',
        'venue_city', 'venue_state',
        'quantity_sold', 'price_paid', 'commission', 'ticket_price',
        'commission_percent', 'earnings',
    ],
) }}
