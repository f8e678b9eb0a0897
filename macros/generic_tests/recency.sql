{% test recency(model, field, datepart, interval, column_name=none) %}
    {#- Fails when the newest value of `field` is older than `interval`
        dateparts (or the model is empty). -#}
    {%- set field = field or column_name -%}
    with

    newest as (

        select max({{ field }}) as newest_value
        from {{ model }}

    )

    select newest_value
    from newest
    where
        newest_value is null
        or newest_value
        < {{ dateadd(datepart, -1 * interval, 'current_timestamp()') }}
{% endtest %}
