with

source as (

    select * from {{ source('tickit', 'category') }}

),

renamed as (

    select
        ----------  ids
        cast(catid as int) as category_id,

        ----------  strings
        catgroup as category_group,
        catname as category_name,
        catdesc as category_description,

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
