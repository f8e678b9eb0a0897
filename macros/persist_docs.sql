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
        {%- set comment = column_dict[column_name]['description'] -%}
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
