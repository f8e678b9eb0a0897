{#- Overrides dbt-adapters 1.24.5 (dbt-core 1.11's global project):
    generate_schema_name (macros/get_custom_name/get_custom_schema.sql).
    What differs: the `marts` custom schema resolves to the marts_schema
    setting; every other schema is dbt's own (default__generate_schema_name).
    Check it against the upstream macro when upgrading that package. -#}

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
