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

        ----------  lineage
        _cdc_source_ts as source_updated_at,
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source
    where not _cdc_is_deleted

)

select * from renamed
