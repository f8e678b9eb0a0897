{% macro bronze_watermark(column_name='bronze_read_horizon') -%}
    {#- What an incremental model read up to: `horizon`, the last read
        horizon (bronze_read_horizon) `this` stored, and `watermark`, that
        minus the lookback var, each '0' when the table is empty: quoted
        literals, read in one query when the model compiles.

        Why literals and not scalar subqueries: Spark pushes a literal
        filter on bronze_commit_time down to each bronze scan (Parquet
        statistics of _hoodie_commit_time) and plans no subquery over the
        stored table wherever the watermark is referenced (five times in a
        fact's query). A unit test's `this` is its fixture, a CTE name:
        there, and when dbt parses, they stay subqueries. -#}
    {%- set lookback = var('bronze_commit_lookback_minutes', 0) | int -%}
    {%- set query -%}
        select
        {%- if lookback > 0 %}
            {#- Spark 3 cannot parse 'yyyyMMddHHmmssSSS' without separators:
                whole minutes are taken off the seconds, the milliseconds
                follow as text. #}
            coalesce(
                concat(
                    date_format(
                        to_timestamp(
                            substr(max({{ column_name }}), 1, 14), 'yyyyMMddHHmmss'
                        )
                        - make_interval(0, 0, 0, 0, 0, {{ lookback }}, 0),
                        'yyyyMMddHHmmss'
                    ),
                    substr(max({{ column_name }}), 15)
                ),
                '0'
            )
        {%- else %}
            coalesce(max({{ column_name }}), '0')
        {%- endif %}
        as watermark,
        coalesce(max({{ column_name }}), '0') as horizon
        from {{ this }}
    {%- endset -%}
    {%- if execute and this is not string -%}
        {%- set row = run_query(query).rows[0] -%}
        {{ return({'watermark': "'" ~ row[0] ~ "'", 'horizon': "'" ~ row[1] ~ "'"}) }}
    {%- endif -%}
    {{ return({
        'watermark': '(select watermark from (' ~ query ~ ') as stored)',
        'horizon': '(select horizon from (' ~ query ~ ') as stored)',
    }) }}
{%- endmacro %}

{% macro bronze_read_horizon() -%}
    {#- The newest bronze commit instant up to which every commit had
        completed when this run looked at bronze's timelines, as a quoted
        literal: one less than the oldest commit still requested or in flight
        in any tickit source table, else the newest completed one.

        Hudi instants are request times, so a commit requested before a run
        reads and completed after it carries an older instant than rows the
        run already merged; a watermark of "the newest commit merged" would
        skip it for good. Rows newer than this horizon are read again by the
        next run instead (merging them twice is idempotent), and a commit
        requested after the look has a newer instant than any here. Runs at
        execution time only (`call show_timeline` on the Thrift server). -#}
    {%- if not execute %}{{ return("'0'") }}{% endif -%}
    {%- set completed = [] -%}
    {%- set pending = [] -%}
    {#- A unit test's graph has no sources: its horizon is '0', it reads no table. -#}
    {%- for node in graph.get('sources', {}).values() if node.source_name == 'tickit' -%}
        {%- set timeline = run_query(
            "call show_timeline(table => '" ~ node.schema ~ "." ~ node.identifier ~ "')"
        ) -%}
        {%- for instant in timeline.rows
            if instant['action'] in ('commit', 'deltacommit', 'replacecommit') -%}
            {%- do (completed if instant['state'] == 'COMPLETED' else pending).append(
                instant['instant_time']
            ) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if pending -%}
        {{ return("'" ~ ((pending | min | int) - 1) ~ "'") }}
    {%- endif -%}
    {{ return("'" ~ (completed | max if completed else '0') ~ "'") }}
{%- endmacro %}
