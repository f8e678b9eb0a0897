{% macro generate_schema_name(custom_schema_name, node) -%}
    {#- The marts go to the `marts_schema` setting, the schema the dashboard
        reads, so both take it from conf/lakehouse.yml; the other layers keep
        dbt's <target schema>_<custom schema> (tickit_staging, ...). -#}
    {%- if custom_schema_name == 'marts' -%}
        {{ env_var('LAKEHOUSE_MARTS_SCHEMA') | trim }}
    {%- else -%}
        {{ default__generate_schema_name(custom_schema_name, node) }}
    {%- endif -%}
{%- endmacro %}
