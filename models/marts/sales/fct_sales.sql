{#- One row per live sale, kept as an incremental Hudi merge on bronze's
    commits (the table options and post-hooks both facts share are in
    dbt_project.yml; why each step is so: docs/decisions/0006).

    A full build takes every sale. An incremental run writes the sales whose
    bronze rows (the sale's, its listing's, its event's) were committed after
    the read horizon the last run stored, and a delete marker for each sale
    soft-deleted since: the merge deletes on `is_deleted_in_bronze`.

    To add a column: select it in int_sales_joined_to_listings_and_events,
    add it to `final` below and to fct_sales in _sales__models.yml (name,
    data_type, description: the contract), then build once with
    `--full-refresh` (on_schema_change is fail: a merge cannot fill a new
    column in the rows it does not rewrite). -#}
{{ config(
    materialized='incremental',
    unique_key='sale_key',
    meta={
        'merge_delete_column': 'is_deleted_in_bronze',
        'compared_joins': {
            'event_id': 'int_events_joined_to_venues_and_categories',
        },
    },
) }}
{#- What an incremental run reads besides the intermediate model, named
    for dbt's parse, which sees only a full build's branch. -#}
-- depends_on: {{ ref('stg_tickit__sales') }}
-- depends_on: {{ ref('stg_tickit__listings') }}
-- depends_on: {{ ref('int_events_joined_to_venues_and_categories') }}
-- depends_on: {{ ref('stg_tickit__deleted_records') }}
{%- set timeline = bronze_timeline() %}

with

{% if is_incremental() -%}

{%- set stored = bronze_watermark() %}
{{ fact_candidate_keys(
    stored,
    base=ref('stg_tickit__sales'),
    key_column='sale_id',
    bronze_table='sales',
    joined={
        'listing_id': ['listing', ref('stg_tickit__listings')],
        'event_id': ['event', ref('int_events_joined_to_venues_and_categories')],
    },
) }}

{% endif -%}

sales as (

    select * from {{ ref('int_sales_joined_to_listings_and_events') }}
    {%- if is_incremental() %}
    where
        sale_id in (
            select /*+ broadcast(candidate_keys) */ candidate_keys.sale_id
            from candidate_keys
        )
        and bronze_commit_time > {{ stored.watermark }}
    {%- endif %}

),

-- a delete marker for each sale soft-deleted since the horizon (none on a
-- full build, which reads live rows only)
deleted_sales as (

    {{ fact_delete_markers('sale_id', timeline, 'sales') }}

),

-- one row per sale: the row read, else its delete marker
final as (

    select
        {{ surrogate_key([
            'coalesce(sales.sale_id, deleted_sales.sale_id)'
        ]) }} as sale_key,
        coalesce(sales.sale_id, deleted_sales.sale_id) as sale_id,
        sales.listing_id,
        sales.event_id,
        sales.category_id,
        sales.venue_id,
        sales.seller_id,
        sales.buyer_id,
        sales.date_id,
        sales.sold_at,
        sales.sale_date,
        sales.listed_at,
        sales.event_starts_at,
        sales.event_name,
        sales.category_group,
        sales.category_name,
        sales.venue_name,
        sales.venue_city,
        sales.venue_state,
        sales.quantity_sold,
        sales.price_paid,
        sales.commission,
        sales.ticket_price,
        sales.commission_percent,
        sales.earnings,
        {%- if is_incremental() %}
        sales.sale_id is null as is_deleted_in_bronze,
        {%- endif %}
        coalesce(
            sales.bronze_commit_time, deleted_sales.deleted_commit_time
        ) as bronze_commit_time,
        {{ timeline.read_horizon }} as bronze_read_horizon

    from sales
    full join deleted_sales
        on sales.sale_id = deleted_sales.sale_id

)

select * from final
