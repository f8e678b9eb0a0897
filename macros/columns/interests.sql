{% macro interest_column_names() -%}
    {#- likes_<interest> for every interest of the `interests` var, in order:
        the one list of the users' interest flags, so that an interest is
        added in one place. -#}
    {%- set names = [] -%}
    {%- for interest in var('interests') -%}
        {%- do names.append('likes_' ~ interest) -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}


{% macro interest_columns(relation=none, from_bronze=false) -%}
    {#- The interest flags as a select list, without a trailing comma:
        renamed from bronze's like<interest> columns (from_bronze), else
        likes_<interest>, qualified with `relation` when given. -#}
    {%- set columns = [] -%}
    {%- for interest in var('interests') -%}
        {%- if from_bronze -%}
            {%- do columns.append('like' ~ interest ~ ' as likes_' ~ interest) -%}
        {%- elif relation -%}
            {%- do columns.append(relation ~ '.likes_' ~ interest) -%}
        {%- else -%}
            {%- do columns.append('likes_' ~ interest) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ columns | join(',\n        ') }}
{%- endmacro %}


{% macro interest_counts(relation, population) -%}
    {#- One row: how many rows of `relation` there are (as `population`) and
        how many of them like each interest of the `interests` var. -#}
with

people as (

    select * from {{ relation }}

),

likes as (

    select
        count(*) as {{ population }},
        {%- for interest in var('interests') %}
        count_if(likes_{{ interest }}) as {{ interest }}{{ ',' if not loop.last }}
        {%- endfor %}
    from people

)

select * from likes
{%- endmacro %}
