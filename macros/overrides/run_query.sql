{#- Overrides dbt-adapters 1.24.5: run_query (macros/etc/statement.sql).
    What differs: statements that return no rows run without fetching a
    result.
    Check it against the upstream macro when upgrading that package. -#}

{% macro run_query(sql) %}
    {#- dbt's run_query, except that statements returning no rows (DDL, DML)
        run without fetching: over the Spark Thrift Server, PyHive fails to
        fetch their empty, column-less result ("'NoneType' object is not
        iterable"), which breaks dbt's unit tests and column comments. -#}
    {%- set code = modules.re.sub(
        '^(\\s|--[^\\n]*\\n|/\\*.*?\\*/)*', '', sql | string,
        flags=modules.re.S
    ) | lower -%}
    {%- set first_word = (code.split() or [''])[0] -%}
    {%- set fetch = first_word not in [
        'alter', 'analyze', 'cache', 'clear', 'comment', 'create', 'delete',
        'drop', 'insert', 'merge', 'msck', 'refresh', 'set', 'truncate',
        'uncache', 'update', 'use',
    ] -%}
    {% call statement('run_query_statement', fetch_result=fetch, auto_begin=false) %}
        {{ sql }}
    {% endcall %}
    {% do return(load_result('run_query_statement').table) %}
{% endmacro %}
