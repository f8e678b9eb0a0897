{% macro compact_fact(relation) -%}
    {#- Post-hook of the merge-on-read facts (fct_sales, fct_listings): Hudi's
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
        run wrote, read by the hourly build's tests (touched_rows): the rows
        of the merge's batch table (merge_batch_relation) that are not
        deletes, in the fact's columns. Why the batch and not the stored
        rows: the fact is merge-on-read, so finding a few thousand keys in
        it reads every base and log file (8 s at --scale 10, as long as the
        merge); the merge stores the batch's values as they are (tests/dbt
        compares the copy with the rows the fact stored with this run's
        horizon). Runs before drop_merge_batch. Dropped on a full build. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set query = none -%}
    {%- if is_incremental() -%}
        {%- set query -%}
        select {{ hudi_data_columns(relation) | join(', ') }}
        from {{ merge_batch_relation(relation) }}
        where not {{ config.get('meta')['merge_delete_column'] }}
        {%- endset -%}
    {%- endif -%}
    {%- do replace_parquet_table(touched_rows_relation(relation), query) -%}
{%- endmacro %}
