{% macro hudi_data_columns(relation) -%}
    {#- The relation's columns without Hudi's _hoodie_* meta columns: a MERGE
        must never assign them (the `_hoodie_commit_time` trap). -#}
    {%- set columns = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- if not column.name.startswith('_hoodie_') -%}
            {%- do columns.append(column.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(columns) }}
{%- endmacro %}


{% macro companion_table(relation, suffix) -%}
    {#- A table next to `relation`, named after it with `suffix`: where the
        incremental facts keep their merge batch, their touched rows and their
        compared joins' values. -#}
    {{ return(relation.incorporate(path={
        'identifier': relation.identifier ~ suffix
    }, type='table')) }}
{%- endmacro %}


{% macro replace_parquet_table(relation, query=none) -%}
    {#- Drops `relation` and, given a query, writes its rows to it as a new
        Parquet table: the incremental facts' batch, touched-rows and
        joined-state tables, which each run writes again. dbt's relation
        cache is told both, so that a node running later in the same build
        finds the table there without asking the server (touched_rows: one
        query less per test of a fact in an hourly build). -#}
    {%- do run_query('drop table if exists ' ~ relation) -%}
    {%- do adapter.cache_dropped(relation) -%}
    {%- if query is not none -%}
        {%- do run_query(
            'create table ' ~ relation ~ ' using parquet as\n' ~ query
        ) -%}
        {%- do adapter.cache_added(relation) -%}
    {%- endif -%}
{%- endmacro %}


{% macro merge_batch_relation(target) -%}
    {#- Where a Hudi merge keeps its batch until the post-hook drops it. -#}
    {{ return(companion_table(target, '__batch')) }}
{%- endmacro %}


{% macro drop_merge_batch(target) -%}
    {#- Post-hook of the Hudi merges: the batch table
        spark__create_temporary_view wrote is dropped once the merge
        committed (a full build has none), through replace_parquet_table
        like the table's creation, so dbt's relation cache drops it too.
        Renders nothing: the drop has run. -#}
    {%- if execute -%}
        {%- do replace_parquet_table(merge_batch_relation(target)) -%}
    {%- endif -%}
{%- endmacro %}
