{% macro keys_not_once_in_fact(bronze_table, bronze_key, fact, key_column) -%}
    {#- A reconciliation's failing rows: each key live in `bronze_table` that
        `fact` does not hold exactly once, and each key `fact` holds that is
        not live in bronze (deleted at the source or never there). -#}
with

bronze_keys as (

    select {{ bronze_key }} as {{ key_column }}
    from {{ source('tickit', bronze_table) }}
    where not _cdc_is_deleted

),

fact_keys as (

    select
        {{ key_column }},
        count(*) as occurrences
    from {{ fact }}
    group by {{ key_column }}

)

select
    coalesce(
        bronze_keys.{{ key_column }}, fact_keys.{{ key_column }}
    ) as {{ key_column }},
    coalesce(fact_keys.occurrences, 0) as occurrences_in_mart,
    bronze_keys.{{ key_column }} is not null as is_live_in_bronze
from bronze_keys
full outer join fact_keys
    on bronze_keys.{{ key_column }} = fact_keys.{{ key_column }}
where
    bronze_keys.{{ key_column }} is null
    or fact_keys.{{ key_column }} is null
    or fact_keys.occurrences != 1
{%- endmacro %}
