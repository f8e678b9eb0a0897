with

source as (

    select * from {{ source('tickit', 'users') }}

),

renamed as (

    select
        ----------  ids
        userid as user_id,

        ----------  strings
        username,
        firstname as first_name,
        lastname as last_name,
        city,
        state,
        email,
        phone,
        {{ optional_column(
            source('tickit', 'users'), 'loyaltytier', 'string'
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
        _cdc_source_ts as source_updated_at,
        _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time

    from source
    where not _cdc_is_deleted

)

select * from renamed
