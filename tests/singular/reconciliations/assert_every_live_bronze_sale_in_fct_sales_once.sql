-- reconciliation: every live bronze sale is in fct_sales exactly once, and
-- fct_sales holds no other sale (deleted at the source or never there)
with

bronze_sales as (

    select salesid as sale_id
    from {{ source('tickit', 'sales') }}
    where not _cdc_is_deleted

),

mart_sales as (

    select
        sale_id,
        count(*) as occurrences
    from {{ ref('fct_sales') }}
    group by sale_id

)

select
    coalesce(bronze_sales.sale_id, mart_sales.sale_id) as sale_id,
    coalesce(mart_sales.occurrences, 0) as occurrences_in_mart,
    bronze_sales.sale_id is not null as is_live_in_bronze
from bronze_sales
full outer join mart_sales
    on bronze_sales.sale_id = mart_sales.sale_id
where
    bronze_sales.sale_id is null
    or mart_sales.sale_id is null
    or mart_sales.occurrences != 1
