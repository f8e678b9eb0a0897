{% macro persisted_comment(description) -%}
    {#- A description as stored in the catalog: at most 255 characters. The
        Hive metastore keeps a column comment in a varchar(256); a longer one
        makes Spark retry the metastore call for 20 s, then store the table
        in a Spark-only format whose columns cannot be altered. -#}
    {%- set text = description | trim -%}
    {%- if text | length > 255 -%}
        {%- set text = text[:252] ~ '...' -%}
    {%- endif -%}
    {{ return(text) }}
{%- endmacro %}
