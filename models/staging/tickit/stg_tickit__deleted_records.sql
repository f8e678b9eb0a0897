{#- One row per key soft-deleted in bronze, for every bronze table of
    conf/tables.yml: what the incremental marts delete, and whose deletion
    commit they must notice. -#}
{%- set record_keys = bronze_record_keys() -%}

with

{% for table_name in record_keys %}
{{ table_name }}_source as (

    select * from {{ source('tickit', table_name) }}

),

{% endfor -%}

unioned as (
    {%- for table_name, key_column in record_keys.items() %}

    select
        '{{ table_name }}' as bronze_table,
        cast({{ key_column }} as bigint) as record_id,
        _cdc_op as change_operation,
        _cdc_source_ts as deleted_at,
        {{ bronze_lineage_columns(source_updated_at=false) }}
    from {{ table_name }}_source
    where _cdc_is_deleted
    {%- if not loop.last %}

    union all
    {%- endif %}
    {%- endfor %}

)

select * from unioned
