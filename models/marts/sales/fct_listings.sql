{#- One row per live listing, kept as an incremental Hudi merge on bronze's
    commits, like fct_sales (the table options and post-hooks both facts
    share are in dbt_project.yml; why each step is so: docs/decisions/0006).

    A full build takes every listing. An incremental run writes the listings
    whose bronze rows (the listing's, its event's) were committed after the
    read horizon the last run stored, and a delete marker for each listing
    soft-deleted since: the merge deletes on `is_deleted_in_bronze`.

    To add a column: select it in int_listings_joined_to_events, add it to
    `final` below and to fct_listings in _sales__models.yml (name, data_type,
    description: the contract), then build once with `--full-refresh`
    (on_schema_change is fail: a merge cannot fill a new column in the rows
    it does not rewrite). -#}
{{ config(
    materialized='incremental',
    unique_key='listing_key',
    meta={
        'merge_delete_column': 'is_deleted_in_bronze',
        'compared_joins': {
            'event_id': 'int_events_joined_to_venues_and_categories',
        },
    },
) }}
{#- What an incremental run reads besides the intermediate model, named
    for dbt's parse, which sees only a full build's branch. -#}
-- depends_on: {{ ref('stg_tickit__listings') }}
-- depends_on: {{ ref('int_events_joined_to_venues_and_categories') }}
-- depends_on: {{ ref('stg_tickit__deleted_records') }}
{%- set timeline = bronze_timeline() %}

with

{% if is_incremental() -%}

{%- set stored = bronze_watermark() %}
{{ fact_candidate_keys(
    stored,
    base=ref('stg_tickit__listings'),
    key_column='listing_id',
    bronze_table='listing',
    joined={
        'event_id': ['event', ref('int_events_joined_to_venues_and_categories')],
    },
) }}

{% endif -%}

listings as (

    select * from {{ ref('int_listings_joined_to_events') }}
    {%- if is_incremental() %}
    where
        listing_id in (
            select /*+ broadcast(candidate_keys) */ candidate_keys.listing_id
            from candidate_keys
        )
        and bronze_commit_time > {{ stored.watermark }}
    {%- endif %}

),

-- a delete marker for each listing soft-deleted since the horizon (none on a
-- full build, which reads live rows only)
deleted_listings as (

    {{ fact_delete_markers('listing_id', timeline, 'listings') }}

),

-- one row per listing: the row read, else its delete marker
final as (

    select
        {{ surrogate_key([
            'coalesce(listings.listing_id, deleted_listings.listing_id)'
        ]) }} as listing_key,
        coalesce(
            listings.listing_id, deleted_listings.listing_id
        ) as listing_id,
        listings.seller_id,
        listings.event_id,
        listings.category_id,
        listings.venue_id,
        listings.date_id,
        listings.listed_at,
        listings.listing_date,
        listings.event_starts_at,
        listings.event_name,
        listings.category_group,
        listings.category_name,
        listings.venue_name,
        listings.venue_city,
        listings.venue_state,
        listings.tickets_listed,
        listings.price_per_ticket,
        listings.total_price,
        {%- if is_incremental() %}
        listings.listing_id is null as is_deleted_in_bronze,
        {%- endif %}
        coalesce(
            listings.bronze_commit_time, deleted_listings.deleted_commit_time
        ) as bronze_commit_time,
        {{ timeline.read_horizon }} as bronze_read_horizon

    from listings
    full join deleted_listings
        on listings.listing_id = deleted_listings.listing_id

)

select * from final
