{% macro compact_fact(relation) -%}
    {#- Post-hook of the merge-on-read facts (incremental_fact): Hudi's
        compaction folds the log files that merges appended into new base
        files, so reads stop merging them. It rewrites the table, which is
        what merge-on-read keeps off the hourly path: it renders nothing (dbt
        skips an empty hook) with the var `maintain_facts` false, as the
        hourly job passes, and on a full build, which has just written the
        base files. -#}
    {%- if var('maintain_facts') and is_incremental() -%}
        {#- every file slice with a log file, however few merges wrote it -#}
        call run_compaction(
            op => 'scheduleAndExecute',
            table => '{{ relation.schema }}.{{ relation.identifier }}',
            options => 'hoodie.compact.inline.max.delta.commits=1'
        )
    {%- endif -%}
{%- endmacro %}


{% macro keep_touched_rows(relation) -%}
    {#- Post-hook of the incremental facts: a Parquet copy of the rows this
        run wrote, read by the hourly build's tests (touched_rows): the
        stored rows of the keys the merge's batch table (merge_batch_relation)
        wrote and did not delete, in one scan of the fact instead of one per
        test (each test of a merge-on-read fact would otherwise read every
        base and log file to find a few thousand rows). Runs before
        drop_merge_batch. Dropped on a full build. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set query = none -%}
    {%- if is_incremental() -%}
        {%- set key = config.get('unique_key') -%}
        {%- set query -%}
        select /*+ broadcast(written) */ stored_rows.*
        from {{ relation }} as stored_rows
        left semi join (
            select {{ key }} from {{ merge_batch_relation(relation) }}
            where not {{ config.get('meta')['merge_delete_column'] }}
        ) as written
            on stored_rows.{{ key }} = written.{{ key }}
        {%- endset -%}
    {%- endif -%}
    {%- do replace_parquet_table(touched_rows_relation(relation), query) -%}
{%- endmacro %}
