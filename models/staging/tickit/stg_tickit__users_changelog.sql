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

        ----------  strings
        username,
        firstname as first_name,
        lastname as last_name,
        city,
        state,
        email,
        phone,
        {{ optional_column(
            source('tickit', 'users_changelog'), 'loyaltytier', 'string'
        ) }} as loyalty_tier,

        ----------  booleans
        likesports as likes_sports,
        liketheatre as likes_theatre,
        likeconcerts as likes_concerts,
        likejazz as likes_jazz,
        likeclassical as likes_classical,
        likeopera as likes_opera,
        likerock as likes_rock,
        likevegas as likes_vegas,
        likebroadway as likes_broadway,
        likemusicals as likes_musicals,

        ----------  lineage
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source

)

select * from renamed
