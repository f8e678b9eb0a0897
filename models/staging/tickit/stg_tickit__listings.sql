with

source as (

    select * from {{ source('tickit', 'listing') }}

),

renamed as (

    select
        ----------  ids
        listid as listing_id,
        sellerid as seller_id,
        eventid as event_id,
        cast(dateid as int) as date_id,

        ----------  numerics
        cast(numtickets as int) as tickets_listed,
        priceperticket as price_per_ticket,
        totalprice as total_price,

        ----------  timestamps
        listtime as listed_at,

        ----------  lineage
        _cdc_source_ts as source_updated_at,
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source
    where not _cdc_is_deleted

)

select * from renamed
