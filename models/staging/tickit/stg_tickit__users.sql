with

source as (

    select * from {{ source('tickit', 'users') }}

),

renamed as (

    select
        ----------  ids
        userid as user_id,

        ----------  user attributes
        {{ user_columns_from_bronze(source('tickit', 'users')) }},

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
