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
