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

        ----------  lineage
        _cdc_source_ts as source_updated_at,
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source
    where not _cdc_is_deleted

)

select * from renamed
