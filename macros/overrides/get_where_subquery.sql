{#- Overrides dbt-adapters 1.24.5: get_where_subquery (and so
    default__get_where_subquery)
    (macros/materializations/tests/where_subquery.sql).
    What differs: the `__touched_rows__` placeholder in a test's `where` tests
    the rows an incremental fact's last run wrote; any other `where` is dbt's.
    Check it against the upstream macro when upgrading that package. -#}

{% macro get_where_subquery(relation) -%}
    {#- dbt's `where` for data tests (the tested relation becomes a filtered
        subquery), plus one placeholder resolved when the test runs:
        `__touched_rows__` tests the rows the last run of an incremental fact
        wrote instead of the whole table (touched_rows). dbt_project.yml puts
        it on the marts' tests. -#}
    {%- set where = config.get('where') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set tested = relation -%}
    {%- if '__touched_rows__' in where -%}
        {%- set tested = touched_rows(relation) -%}
        {%- set where = where | replace('__touched_rows__', 'true') -%}
    {%- endif -%}
    {{ return('(select * from ' ~ tested ~ ' where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}
