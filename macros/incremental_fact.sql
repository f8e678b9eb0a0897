{% macro incremental_fact(rows, bronze_table, key_column, fact_key, columns) -%}
    {#- A fact table kept as an incremental Hudi merge on bronze commits, one
        row per `key_column` of `rows` (an intermediate model carrying a
        `bronze_commit_time` that counts its joined rows' commits too).

        A full build takes every row. An incremental run merges only the
        keys whose rows bronze committed after the read horizon the last run
        stored (bronze_watermark; bronze_read_horizon says why it is not the
        newest commit merged), and deletes the keys soft-deleted in
        `bronze_table` since then that the table still holds: the merge
        deletes on `is_deleted_in_bronze` (spark__get_merge_sql). Every row
        the run writes carries this run's horizon, so the watermark moves in
        the same Hudi commit as the rows. `fact_key`
        is the surrogate key the merge matches on; `columns` are the columns
        of `rows` the fact carries between its keys and its lineage. -#}
    {{ config(
        materialized='incremental',
        file_format='hudi',
        incremental_strategy='merge',
        unique_key=fact_key,
        on_schema_change='fail',
        options={'type': 'cow', 'preCombineField': 'bronze_commit_time'},
        meta={'merge_delete_column': 'is_deleted_in_bronze'},
        persist_docs={'relation': true, 'columns': false},
    ) }}
    {#- Column comments are not persisted: every Hudi write resets them in
        the catalog, and each ALTER ... COMMENT would be one more Hudi commit.
        The deleted records are referenced here, not only in the incremental
        branch, so that dbt knows the dependency when it parses. -#}
    {%- set deleted_records = ref('stg_tickit__deleted_records') %}
    {%- set horizon = bronze_read_horizon() %}
with

fact_rows as (

    select * from {{ rows }}

),

{% if is_incremental() %}

deleted_records as (

    select * from {{ deleted_records }}

),

-- the join is computed once: the rows committed since the last run's
-- horizon are the batch itself
changed_rows as (

    select
        {{ key_column }},
        {%- for column in columns %}
        {{ column }},
        {%- endfor %}
        false as is_deleted_in_bronze,
        bronze_commit_time
    from fact_rows
    where bronze_commit_time > {{ bronze_watermark() }}

),

-- only keys still in the table: a deletion applied by an earlier run is
-- not merged again. Its ordering value is never older than the stored
-- row's (a row merged from a read that ran while the deletion's commit was
-- in flight can carry a newer joined commit), so no table type can ignore
-- the delete as stale (apache/hudi#19978 on merge-on-read).
deleted_rows as (

    select
        current_rows.{{ key_column }},
        {%- for column in columns %}
        null as {{ column }},
        {%- endfor %}
        true as is_deleted_in_bronze,
        greatest(
            current_rows.bronze_commit_time, deleted_records.bronze_commit_time
        ) as bronze_commit_time
    from deleted_records
    inner join {{ this }} as current_rows
        on deleted_records.record_id = current_rows.{{ key_column }}
    where
        deleted_records.bronze_table = '{{ bronze_table }}'
        and deleted_records.bronze_commit_time > {{ bronze_watermark() }}

),

batch as (

    select * from changed_rows
    union all
    select * from deleted_rows

),

{% else %}

batch as (

    select * from fact_rows

),

{% endif %}

final as (

    select
        {{ surrogate_key([key_column]) }} as {{ fact_key }},
        {{ key_column }},
        {%- for column in columns %}
        {{ column }},
        {%- endfor %}
        {%- if is_incremental() %}
        is_deleted_in_bronze,
        {%- endif %}
        bronze_commit_time,
        {{ horizon }} as bronze_read_horizon

    from batch

)

select * from final
{%- endmacro %}
