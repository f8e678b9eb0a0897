{#- Overrides dbt-spark 1.11.0: spark__create_temporary_view and
    spark__get_merge_sql (macros/adapters.sql,
    macros/materializations/incremental/strategies.sql); and dbt-adapters
    1.24.5: check_for_schema_changes's dispatch for spark, over its
    default__ (macros/materializations/models/incremental/on_schema_change.sql).
    What differs: only for incremental models with file_format hudi: the
    batch is written once to a Parquet table, the merge spells out its columns
    without Hudi's meta columns and deletes by a flag, and the schema check
    ignores those columns. Other formats get dbt-spark's own.
    Check it against the upstream macro when upgrading that package. -#}

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
