{% test not_empty_string(model, column_name, trim_whitespace=true) %}
    {#- Rows whose value is an empty (or blank) string; nulls pass. -#}
    select {{ column_name }}
    from {{ model }}
    where
        {% if trim_whitespace -%}
            trim({{ column_name }}) = ''
        {%- else -%}
            {{ column_name }} = ''
        {%- endif %}
{% endtest %}
