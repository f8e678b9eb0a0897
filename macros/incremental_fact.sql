{% macro incremental_fact(rows, bronze_table, key_column, fact_key, columns) -%}
    {#- A fact table kept as an incremental Hudi merge on bronze commits, one
        row per `key_column` of `rows` (an intermediate model carrying a
        `bronze_commit_time` that counts its joined rows' commits too).

        A full build takes every row. An incremental run merges only the
        keys whose rows bronze committed after the read horizon the last run
        stored (bronze_watermark; bronze_read_horizon says why it is not the
        newest commit merged) and whose columns differ from the stored row,
        and deletes the keys soft-deleted in `bronze_table` since then that
        the table still holds: the merge deletes on `is_deleted_in_bronze`
        (spark__get_merge_sql). Every row the run writes carries this run's
        horizon, so the watermark moves in the same Hudi commit as the rows.
        `fact_key` is the surrogate key the merge matches on; `columns` are
        the columns of `rows` the fact carries between its keys and its
        lineage.

        Why the comparison: a change to a joined row re-reads every fact row
        it reaches (one category's description reaches a tenth of the sales)
        though few of those rows carry the changed column. Only rows whose
        values changed are written, so a row's `bronze_commit_time` is the
        latest commit that changed it (a full build, knowing no history,
        takes the latest commit behind it).

        Why merge-on-read with a bucket index: a merge appends the rows it
        writes to log files, where copy-on-write rewrites every base file
        holding one of them (changed keys spread over all dates reach nearly
        every file). The bucket index hashes the key to one of a fixed set of
        file groups, so inserts go to logs too (no small base files) and the
        merge looks no key up in the stored files. Compaction of the logs
        follows a build unless the var `maintain_facts` is false: the hourly
        job leaves it to the daily one (compact_fact). The second post-hook
        copies the rows written for the hourly build's tests
        (keep_touched_rows). The metadata table is off, as for bronze: an
        unpartitioned table is one folder to list. -#}
    {{ config(
        materialized='incremental',
        file_format='hudi',
        incremental_strategy='merge',
        unique_key=fact_key,
        on_schema_change='fail',
        options={
            'type': 'mor',
            'preCombineField': 'bronze_commit_time',
            'hoodie.index.type': 'BUCKET',
            'hoodie.bucket.index.num.buckets': var('fact_buckets'),
            'hoodie.compact.inline': 'false',
            'hoodie.metadata.enable': 'false',
        },
        post_hook=[
            "{{ compact_fact(this) }}",
            "{{ keep_touched_rows(this) }}",
        ],
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
-- horizon whose values differ from the stored row (or are new) are the batch
changed_rows as (

    select
        fact_rows.{{ key_column }},
        {%- for column in columns %}
        fact_rows.{{ column }},
        {%- endfor %}
        false as is_deleted_in_bronze,
        fact_rows.bronze_commit_time
    from fact_rows
    left join {{ this }} as current_rows
        on fact_rows.{{ key_column }} = current_rows.{{ key_column }}
    where
        fact_rows.bronze_commit_time > {{ bronze_watermark() }}
        and (
            current_rows.{{ key_column }} is null
            {%- for column in columns %}
            or not (fact_rows.{{ column }} <=> current_rows.{{ column }})
            {%- endfor %}
        )

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
