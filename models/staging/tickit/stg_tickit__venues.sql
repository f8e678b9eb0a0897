with

source as (

    select * from {{ source('tickit', 'venue') }}

),

renamed as (

    select
        ----------  ids
        cast(venueid as int) as venue_id,

        ----------  strings
        venuename as venue_name,
        venuecity as venue_city,
        venuestate as venue_state,

        ----------  numerics
        venueseats as seat_capacity,

        ----------  lineage
        _cdc_source_ts as source_updated_at,
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source
    where not _cdc_is_deleted

)

select * from renamed
