{% macro bronze_watermark(column_name='bronze_commit_time') -%}
    {#- Scalar subquery: the last bronze commit instant the incremental model
        has stored, minus the lookback var, '0' when the table is empty. -#}
    {%- set lookback = var('bronze_commit_lookback_minutes', 0) | int -%}
    (
        select
        {%- if lookback > 0 %}
            coalesce(
                date_format(
                    to_timestamp(max({{ column_name }}), 'yyyyMMddHHmmssSSS')
                    - make_interval(0, 0, 0, 0, 0, {{ lookback }}, 0),
                    'yyyyMMddHHmmssSSS'
                ),
                '0'
            )
        {%- else %}
            coalesce(max({{ column_name }}), '0')
        {%- endif %}
        from {{ this }}
    )
{%- endmacro %}
