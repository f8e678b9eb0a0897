{% macro bronze_watermark(column_name='bronze_read_horizon') -%}
    {#- What an incremental fact read up to: `horizon`, the last read
        horizon (bronze_timeline) `this` stored, and `watermark`, that
        minus the lookback var, each '0' when the table is empty: quoted
        literals, read in one query when the model compiles.

        Why literals and not scalar subqueries: Spark pushes a literal
        filter on bronze_commit_time down to each bronze scan (Parquet
        statistics of _hoodie_commit_time) and plans no subquery over the
        stored table wherever the watermark is referenced (five times in a
        fact's query). A unit test's `this` is its fixture, a CTE name:
        there, and when dbt parses, they stay subqueries.

        Why the touched rows first: the rows the last run wrote
        (keep_touched_rows) carry the newest horizon the fact stores, in a
        small Parquet copy, where the fact is merge-on-read and read whole
        (4.8 s of fct_sales' 33 s at --scale 10). The copy is absent after a
        full build and empty after a run that wrote no row: then the fact is
        read. A copy older than the fact (its post-hook failed after the
        merge) only makes the run read again rows it merged, which the
        merge takes as they are, as with the lookback. -#}
    {%- if execute and this is not string -%}
        {%- set touched = touched_rows_relation(this) -%}
        {%- set row = none -%}
        {%- if load_relation(touched) is not none -%}
            {%- set row = run_query(stored_horizon_query(touched, column_name)).rows[0] -%}
        {%- endif -%}
        {%- if row is none or row[1] == '0' -%}
            {%- set row = run_query(stored_horizon_query(this, column_name)).rows[0] -%}
        {%- endif -%}
        {{ return({'watermark': "'" ~ row[0] ~ "'", 'horizon': "'" ~ row[1] ~ "'"}) }}
    {%- endif -%}
    {%- set query = stored_horizon_query(this, column_name) -%}
    {{ return({
        'watermark': '(select watermark from (' ~ query ~ ') as stored)',
        'horizon': '(select horizon from (' ~ query ~ ') as stored)',
    }) }}
{%- endmacro %}


{% macro stored_horizon_query(relation, column_name) -%}
    {#- One row: `watermark`, the newest `column_name` in `relation` minus
        the var bronze_commit_lookback_minutes, and `horizon`, the newest;
        '0' each when it has none (bronze_watermark). -#}
    {%- set lookback = var('bronze_commit_lookback_minutes', 0) | int -%}
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
    from {{ relation }}
{%- endmacro %}


{% macro bronze_timeline() -%}
    {#- Two instants of the tickit source tables' timelines, as quoted
        literals, from `call show_timeline` on each when this run looked:

        `read_horizon`, up to which every commit had completed: one less
        than the oldest commit still requested or in flight in any of them,
        else the newest completed one. Hudi instants are request times, so a
        commit requested before a run reads and completed after it carries
        an older instant than rows the run already merged; a watermark of
        "the newest commit merged" would skip it for good. Rows newer than
        this horizon are read again by the next run instead (merging them
        twice is idempotent), and a commit requested after the look has a
        newer instant than any here.

        `newest_commit`, the newest completed commit: no row any run has
        read so far carries a newer commit, since every one was read from
        commits completed by then (the incremental facts order their delete
        markers by it).

        Runs at execution time only; a unit test's graph has no sources:
        both are '0' there, and it reads no table. -#}
    {%- if not execute %}{{ return({'read_horizon': "'0'", 'newest_commit': "'0'"}) }}{% endif -%}
    {%- set completed = [] -%}
    {%- set pending = [] -%}
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
    {%- set newest = completed | max if completed else '0' -%}
    {%- set horizon = ((pending | min | int) - 1) if pending else newest -%}
    {{ return({
        'read_horizon': "'" ~ horizon ~ "'",
        'newest_commit': "'" ~ newest ~ "'",
    }) }}
{%- endmacro %}
