{% test accepted_range(
    model, column_name, min_value=none, max_value=none, inclusive=true
) %}
    {#- Rows whose value lies outside [min_value, max_value]; nulls pass. -#}
    {%- set low = '>=' if inclusive else '>' -%}
    {%- set high = '<=' if inclusive else '<' -%}
    select {{ column_name }}
    from {{ model }}
    where
        {{ column_name }} is not null
        and not (
            true
            {%- if min_value is not none %}
                and {{ column_name }} {{ low }} {{ min_value }}
            {%- endif %}
            {%- if max_value is not none %}
                and {{ column_name }} {{ high }} {{ max_value }}
            {%- endif %}
        )
{% endtest %}
