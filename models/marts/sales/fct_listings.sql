{#- Column comments are not persisted: every Hudi write resets them in the
    catalog, and each ALTER ... COMMENT would be one more Hudi commit. #}
-- depends_on: {{ ref('stg_tickit__deleted_records') }}
{{
    config(
        materialized='incremental',
        file_format='hudi',
        incremental_strategy='merge',
        unique_key='listing_key',
        on_schema_change='fail',
        options={
            'type': 'cow',
            'preCombineField': 'bronze_commit_time',
        },
        meta={'merge_delete_column': 'is_deleted_in_bronze'},
        persist_docs={'relation': true, 'columns': false},
    )
}}

{#- An incremental run merges only the listings whose bronze rows (the
    listing, its event, venue, category) were committed after the last commit
    this table has seen, and deletes the listings soft-deleted since. -#}

with

listings as (

    select * from {{ ref('int_listings_joined_to_events') }}

),

{% if is_incremental() %}

deleted_records as (

    select * from {{ ref('stg_tickit__deleted_records') }}

),

changed_listings as (

    select
        listing_id,
        bronze_commit_time,
        false as is_deleted_in_bronze
    from listings
    where bronze_commit_time > {{ bronze_watermark() }}

),

-- only keys still in the table: a deletion applied by an earlier run is
-- not merged again
deleted_listings as (

    select
        cast(deleted_records.record_id as int) as listing_id,
        deleted_records.bronze_commit_time,
        true as is_deleted_in_bronze
    from deleted_records
    inner join {{ this }} as current_listings
        on deleted_records.record_id = current_listings.listing_id
    where
        deleted_records.bronze_table = 'listing'
        and deleted_records.bronze_commit_time > {{ bronze_watermark() }}

),

batch as (

    select * from changed_listings
    union all
    select * from deleted_listings

),

{% else %}

batch as (

    select
        listing_id,
        bronze_commit_time
    from listings

),

{% endif %}

final as (

    select
        ----------  keys
        {{ surrogate_key(['batch.listing_id']) }} as listing_key,
        batch.listing_id,
        listings.seller_id,
        listings.event_id,
        listings.category_id,
        listings.venue_id,
        listings.date_id,

        ----------  timestamps and dates
        listings.listed_at,
        listings.listing_date,
        listings.event_starts_at,

        ----------  strings
        listings.event_name,
        listings.category_group,
        listings.category_name,
        listings.venue_name,
        listings.venue_city,
        listings.venue_state,

        ----------  numerics
        listings.tickets_listed,
        listings.price_per_ticket,
        listings.total_price,

        ----------  lineage
        {% if is_incremental() %}
        batch.is_deleted_in_bronze,
        {% endif %}
        batch.bronze_commit_time

    from batch
    left join listings
        on batch.listing_id = listings.listing_id

)

select * from final
