{% macro get_where_subquery(relation) -%}
    {#- dbt's `where` for data tests (the tested relation becomes a filtered
        subquery), plus one placeholder resolved when the test runs:
        `__touched_rows__`, the rows the last run of an incremental model
        wrote (touched_rows). dbt_project.yml puts it on the marts' tests. -#}
    {%- set where = config.get('where') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set where = where | replace('__touched_rows__', touched_rows(relation)) -%}
    {{ return('(select * from ' ~ relation ~ ' where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}


{% macro touched_rows(relation) -%}
    {#- A predicate on `relation`: with the var tests_scope 'touched' (the
        hourly job) on an incremental model outside a full refresh, the rows
        that carry the newest read horizon, i.e. those the last run merged;
        else every row. A full build writes one horizon on every row, so
        the scoped test checks everything after it. -#}
    {%- set tested = graph.nodes.get(model.attached_node or '', {}) -%}
    {%- set incremental = (tested.get('config') or {}).get('materialized') == 'incremental' -%}
    {%- if var('tests_scope') == 'touched' and incremental and not flags.FULL_REFRESH -%}
        bronze_read_horizon = (select max(bronze_read_horizon) from {{ relation }})
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
