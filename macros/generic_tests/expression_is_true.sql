{% test expression_is_true(model, expression, column_name=none) %}
    {#- Rows for which the expression is not true (false or null). With a
        column, the expression is appended to it: `>= 0`. -#}
    {%- set predicate = (column_name ~ ' ' ~ expression)
        if column_name else expression -%}
    select *
    from {{ model }}
    where not coalesce({{ predicate }}, false)
{% endtest %}
