{% macro touched_rows_relation(relation) -%}
    {#- Where an incremental fact keeps the rows its last run wrote. -#}
    {{ return(companion_table(relation, '__touched')) }}
{%- endmacro %}


{% macro touched_rows(relation) -%}
    {#- The relation a test of `relation` reads: with the var tests_scope
        'touched' (the hourly job) on an incremental fact outside a full
        refresh, the copy of the rows its last run wrote that the fact's
        post-hook keeps (keep_touched_rows), when there is one; else the
        relation itself. A full refresh drops the copy: every row is new.
        Generic tests get it through `where`; a singular test of rows one
        at a time calls it on its ref. -#}
    {%- set incremental = namespace(found=false) -%}
    {%- for node_id in model.depends_on.nodes -%}
        {%- set node = graph.nodes.get(node_id, {}) -%}
        {%- if node.get('alias') == relation.identifier
            and (node.get('config') or {}).get('materialized') == 'incremental' -%}
            {%- set incremental.found = true -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if var('tests_scope') == 'touched' and incremental.found and not flags.FULL_REFRESH and execute -%}
        {%- set touched = touched_rows_relation(relation) -%}
        {#- dbt's relation cache, which the post-hook that wrote the copy
            updated (replace_parquet_table) -#}
        {%- if load_relation(touched) is not none -%}
            {{ return(touched) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}
