{#- Column comments are not persisted: every Hudi write resets them in the
    catalog, and each ALTER ... COMMENT would be one more Hudi commit. #}
-- depends_on: {{ ref('stg_tickit__deleted_records') }}
{{
    config(
        materialized='incremental',
        file_format='hudi',
        incremental_strategy='merge',
        unique_key='sale_key',
        on_schema_change='fail',
        options={
            'type': 'cow',
            'preCombineField': 'bronze_commit_time',
        },
        meta={'merge_delete_column': 'is_deleted_in_bronze'},
        persist_docs={'relation': true, 'columns': false},
    )
}}

{#- An incremental run merges only the sales whose bronze rows (the sale,
    its listing, event, venue, category) were committed after the last commit
    this table has seen, and deletes the sales soft-deleted since. -#}

with

sales as (

    select * from {{ ref('int_sales_joined_to_listings_and_events') }}

),

{% if is_incremental() %}

deleted_records as (

    select * from {{ ref('stg_tickit__deleted_records') }}

),

changed_sales as (

    select
        sale_id,
        bronze_commit_time,
        false as is_deleted_in_bronze
    from sales
    where bronze_commit_time > {{ bronze_watermark() }}

),

-- only keys still in the table: a deletion applied by an earlier run is
-- not merged again
deleted_sales as (

    select
        cast(deleted_records.record_id as int) as sale_id,
        deleted_records.bronze_commit_time,
        true as is_deleted_in_bronze
    from deleted_records
    inner join {{ this }} as current_sales
        on deleted_records.record_id = current_sales.sale_id
    where
        deleted_records.bronze_table = 'sales'
        and deleted_records.bronze_commit_time > {{ bronze_watermark() }}

),

batch as (

    select * from changed_sales
    union all
    select * from deleted_sales

),

{% else %}

batch as (

    select
        sale_id,
        bronze_commit_time
    from sales

),

{% endif %}

final as (

    select
        ----------  keys
        {{ surrogate_key(['batch.sale_id']) }} as sale_key,
        batch.sale_id,
        sales.listing_id,
        sales.event_id,
        sales.category_id,
        sales.venue_id,
        sales.seller_id,
        sales.buyer_id,
        sales.date_id,

        ----------  timestamps and dates
        sales.sold_at,
        sales.sale_date,
        sales.listed_at,
        sales.event_starts_at,

        ----------  strings
        sales.event_name,
        sales.category_group,
        sales.category_name,
        sales.venue_name,
        sales.venue_city,
        sales.venue_state,

        ----------  numerics
        sales.quantity_sold,
        sales.price_paid,
        sales.commission,
        sales.ticket_price,
        sales.commission_percent,
        sales.earnings,

        ----------  lineage
        {% if is_incremental() %}
        batch.is_deleted_in_bronze,
        {% endif %}
        batch.bronze_commit_time

    from batch
    left join sales
        on batch.sale_id = sales.sale_id

)

select * from final
