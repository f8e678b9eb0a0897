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

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
