{% macro optional_column(relation, column_name, data_type) -%}
    {#- The column cast to data_type when the relation has it, else a typed
        null: for columns a source gains mid-stream (schema evolution). -#}
    {%- set found = false -%}
    {%- if execute -%}
        {%- set existing = adapter.get_relation(
            database=relation.database,
            schema=relation.schema,
            identifier=relation.identifier,
        ) -%}
        {%- if existing is not none -%}
            {%- set names = adapter.get_columns_in_relation(existing)
                | map(attribute='name') | map('lower') | list -%}
            {%- set found = column_name | lower in names -%}
        {%- endif -%}
    {%- endif -%}
    {%- if found -%}
        cast({{ column_name }} as {{ data_type }})
    {%- else -%}
        cast(null as {{ data_type }})
    {%- endif -%}
{%- endmacro %}
