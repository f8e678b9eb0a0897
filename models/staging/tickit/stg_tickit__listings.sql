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

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
