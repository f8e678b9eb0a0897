{#- One row per live listing; an incremental run merges the listings whose
    bronze rows (the listing, its event, venue, category) were committed since
    the last run and deletes the listings soft-deleted since
    (incremental_fact). -#}
{{ incremental_fact(
    ref('int_listings_joined_to_events'),
    base=ref('stg_tickit__listings'),
    joined={'event_id': ['event', 'int_events_joined_to_venues_and_categories']},
    compare_joined=['event_id'],
    bronze_table='listing',
    key_column='listing_id',
    fact_key='listing_key',
    columns=[
        'seller_id', 'event_id', 'category_id', 'venue_id', 'date_id',
        'listed_at', 'listing_date', 'event_starts_at',
        'event_name', 'category_group', 'category_name', 'venue_name',
        'venue_city', 'venue_state',
        'tickets_listed', 'price_per_ticket', 'total_price',
    ],
) }}
