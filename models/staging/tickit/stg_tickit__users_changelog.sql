with

source as (

    select * from {{ source('tickit', 'users_changelog') }}

),

renamed as (

    select
        ----------  ids
        _cdc_event_id as change_event_id,
        userid as user_id,

        ----------  change
        _cdc_op as change_operation,
        _cdc_position as change_position,
        _cdc_source_ts as changed_at,
        _cdc_is_deleted as is_deleted,

        ----------  user attributes
        {{ user_columns_from_bronze(source('tickit', 'users_changelog')) }},

        {{ bronze_lineage_columns(source_updated_at=false) }}

    from source

)

select * from renamed
