{% macro bronze_record_keys() -%}
    {#- {bronze table: record key column} for every table of conf/tables.yml,
        from the environment `lakehouse dbt` sets (LAKEHOUSE_BRONZE_RECORD_KEYS),
        so that no model lists the tables again. A table keyed on several
        columns has no single record_id: it is refused here. -#}
    {%- set keys = fromjson(env_var('LAKEHOUSE_BRONZE_RECORD_KEYS')) -%}
    {%- set single = {} -%}
    {%- for table_name, columns in keys.items() -%}
        {%- if columns | length != 1 -%}
            {{ exceptions.raise_compiler_error(
                'bronze table ' ~ table_name ~ ' has a composite key '
                ~ columns ~ '; stg_tickit__deleted_records needs one column'
            ) }}
        {%- endif -%}
        {%- do single.update({table_name: columns[0]}) -%}
    {%- endfor -%}
    {{ return(single) }}
{%- endmacro %}
