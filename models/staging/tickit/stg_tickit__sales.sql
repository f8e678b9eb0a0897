with

source as (

    select * from {{ source('tickit', 'sales') }}

),

renamed as (

    select
        ----------  ids
        salesid as sale_id,
        listid as listing_id,
        sellerid as seller_id,
        buyerid as buyer_id,
        eventid as event_id,
        cast(dateid as int) as date_id,

        ----------  numerics
        cast(qtysold as int) as quantity_sold,
        pricepaid as price_paid,
        commission,
        cast(
            round(pricepaid / nullif(qtysold, 0), 2) as decimal(8, 2)
        ) as ticket_price,
        cast(
            round(commission / nullif(pricepaid, 0) * 100, 2) as decimal(5, 2)
        ) as commission_percent,
        cast(pricepaid - commission as decimal(8, 2)) as earnings,

        ----------  timestamps
        saletime as sold_at,

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
