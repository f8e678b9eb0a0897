with

source as (

    select * from {{ source('tickit', 'event') }}

),

renamed as (

    select
        ----------  ids
        eventid as event_id,
        cast(venueid as int) as venue_id,
        cast(catid as int) as category_id,
        cast(dateid as int) as date_id,

        ----------  strings
        eventname as event_name,

        ----------  timestamps
        starttime as event_starts_at,

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
