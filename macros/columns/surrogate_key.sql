{% macro surrogate_key(field_list) -%}
    {#- md5 of the fields as strings, nulls made explicit so that
        (null, 'a') and ('a', null) hash apart. -#}
    md5(concat_ws('-'
    {%- for field in field_list %}
        , coalesce(cast({{ field }} as string), '_dbt_null_')
    {%- endfor %}
    ))
{%- endmacro %}
