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


{% macro spark__create_temporary_view(relation, compiled_code) -%}
    {#- dbt-spark's temporary view, except for an incremental Hudi model:
        its query is written once to a Parquet batch table
        (merge_batch_relation) and the view dbt's materialization goes on
        with (schema check, spark__get_merge_sql) reads that table.

        Why: Spark keeps a temporary view as its text and analyses it again
        wherever it is referenced, and Hudi's MERGE INTO analyses and
        optimises its source several times. A fact's query joins every
        bronze table it reads, so each pass cost seconds of driver time: a
        5,000-row merge at --scale 1 took 26 s from the view though its
        query alone ran in 5 s, and creating the view took 6 s more. The
        post-hook drop_merge_batch drops the table. -#}
    {%- if model.resource_type == 'model'
        and config.get('materialized') == 'incremental'
        and config.get('file_format') == 'hudi' -%}
        {%- set batch = merge_batch_relation(this) -%}
        {%- do replace_parquet_table(batch, compiled_code) -%}
        {%- set compiled_code = 'select * from ' ~ batch -%}
    {%- endif -%}
    create or replace temporary view {{ relation }} as
    {{ compiled_code }}
{%- endmacro %}


{% macro spark__get_merge_sql(
    target, source, unique_key, dest_columns, incremental_predicates
) -%}
    {#- Hudi: one MERGE INTO that updates, inserts and deletes, with the
        column lists spelled out from the target minus Hudi's meta columns.
        Other file formats keep dbt-spark's merge.

        The merge reads the Parquet batch table that
        spark__create_temporary_view wrote (merge_batch_relation), not the
        model's query. -#}
    {%- if config.get('file_format') != 'hudi' -%}
        {{ return(dbt_spark.spark__get_merge_sql(
            target, source, unique_key, dest_columns, incremental_predicates
        )) }}
    {%- endif -%}
    {%- if unique_key is not string -%}
        {{ exceptions.raise_compiler_error(
            'Hudi merge of ' ~ target ~ ': unique_key must be one column, '
            ~ 'build a surrogate key with surrogate_key() rather than a list'
        ) }}
    {%- endif -%}
    {%- set delete_column = (config.get('meta') or {}).get(
        'merge_delete_column'
    ) -%}
    {%- set columns = hudi_data_columns(target) -%}
    {%- set predicates = [
        'DBT_INTERNAL_SOURCE.' ~ unique_key
        ~ ' = DBT_INTERNAL_DEST.' ~ unique_key
    ] + (incremental_predicates or []) -%}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ merge_batch_relation(target) }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join('\n        and ') }}
    {#- Hudi applies update clauses before delete clauses whatever their
        order: the conditions must exclude each other. #}
    when matched
        {%- if delete_column %} and not DBT_INTERNAL_SOURCE.{{ delete_column }}{% endif %}
        then update set
        {%- for column in columns %}
            {{ column }} = DBT_INTERNAL_SOURCE.{{ column }}
            {{- ',' if not loop.last }}
        {%- endfor %}
    {%- if delete_column %}
    when matched and DBT_INTERNAL_SOURCE.{{ delete_column }} then delete
    {%- endif %}
    when not matched
        {%- if delete_column %} and not DBT_INTERNAL_SOURCE.{{ delete_column }}{% endif %}
        then insert ({{ columns | join(', ') }})
        values (
        {%- for column in columns %}
            DBT_INTERNAL_SOURCE.{{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
        )
{%- endmacro %}


{% macro spark__check_for_schema_changes(source_relation, target_relation) %}
    {#- dbt's schema-change check, minus what is not drift on a Hudi merge:
        the target's _hoodie_* meta columns and the batch's delete flag. -#}
    {%- set changes = default__check_for_schema_changes(
        source_relation, target_relation
    ) -%}
    {%- if config.get('file_format') != 'hudi' -%}
        {{ return(changes) }}
    {%- endif -%}
    {%- set delete_column = (config.get('meta') or {}).get(
        'merge_delete_column', ''
    ) | lower -%}
    {%- set source_not_in_target = [] -%}
    {%- for column in changes['source_not_in_target'] -%}
        {%- if column.name | lower != delete_column -%}
            {%- do source_not_in_target.append(column) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set target_not_in_source = [] -%}
    {%- for column in changes['target_not_in_source'] -%}
        {%- if not column.name.startswith('_hoodie_') -%}
            {%- do target_not_in_source.append(column) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do changes.update({
        'source_not_in_target': source_not_in_target,
        'target_not_in_source': target_not_in_source,
        'schema_changed': (
            source_not_in_target | length > 0
            or target_not_in_source | length > 0
            or changes['new_target_types'] | length > 0
        ),
    }) -%}
    {{ return(changes) }}
{% endmacro %}
