{% macro deleted_keys(bronze_table, key_column) -%}
    {#- The keys of one bronze table soft-deleted in bronze, as `key_column`,
        with their deletion commit: what a model joins to notice that a row it
        joined has disappeared (its deletion commit counts as a change). -#}
    select
        record_id as {{ key_column }},
        bronze_commit_time
    from {{ ref('stg_tickit__deleted_records') }}
    where bronze_table = '{{ bronze_table }}'
{%- endmacro %}
