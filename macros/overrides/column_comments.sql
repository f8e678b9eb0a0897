{#- Overrides dbt-spark 1.11.0: spark__alter_column_comment and
    get_column_comment_sql (macros/adapters.sql).
    What differs: comments on every table format (dbt-spark: delta, hudi,
    iceberg only), only where they differ, and cut to what the metastore can
    hold.
    Check it against the upstream macro when upgrading that package. -#}

{% macro spark__alter_column_comment(relation, column_dict) -%}
    {#- Column comments on every table format (dbt-spark skips parquet), and
        only where the comment differs: on Hudi each ALTER is a commit. -#}
    {%- if relation.type == 'view' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set current = {} -%}
    {%- for row in run_query('describe ' ~ relation) -%}
        {%- if row[0] and not row[0].startswith('#') -%}
            {%- do current.update({row[0]: row[2] or ''}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for column_name in column_dict -%}
        {%- set comment = persisted_comment(
            column_dict[column_name]['description'] or ''
        ) -%}
        {%- if comment and current.get(column_name) != comment -%}
            {%- set escaped = comment | replace("'", "\\'") -%}
            {%- set quoted = adapter.quote(column_name)
                if column_dict[column_name]['quote'] else column_name -%}
            {%- call statement('alter_column_comment') -%}
                alter table {{ relation }} change column {{ quoted }}
                comment '{{ escaped }}'
            {%- endcall -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}


{% macro get_column_comment_sql(column_name, column_dict) -%}
    {#- dbt-spark's column clause of `create view`, with the comment cut to
        what the metastore can hold. -#}
    {%- set column_comment_clause = '' -%}
    {%- if column_name in column_dict
        and column_dict[column_name]['description'] -%}
        {%- set escaped = persisted_comment(
            column_dict[column_name]['description']
        ) | replace("'", "\\'") -%}
        {%- set column_comment_clause = "comment '" ~ escaped ~ "'" -%}
    {%- endif -%}
    {{ adapter.quote(column_name) }} {{ column_comment_clause }}
{%- endmacro %}
