-- reconciliation: sales count, revenue and commission of fct_sales equal
-- those of the live sales in bronze, read straight from the source
with

bronze_sales as (

    select
        count(*) as sale_count,
        coalesce(sum(pricepaid), 0) as revenue,
        coalesce(sum(commission), 0) as commission
    from {{ source('tickit', 'sales') }}
    where not _cdc_is_deleted

),

mart_sales as (

    select
        count(*) as sale_count,
        coalesce(sum(price_paid), 0) as revenue,
        coalesce(sum(commission), 0) as commission
    from {{ ref('fct_sales') }}

)

select
    bronze_sales.sale_count as bronze_sale_count,
    mart_sales.sale_count as mart_sale_count,
    bronze_sales.revenue as bronze_revenue,
    mart_sales.revenue as mart_revenue,
    bronze_sales.commission as bronze_commission,
    mart_sales.commission as mart_commission
from bronze_sales
cross join mart_sales
where
    bronze_sales.sale_count != mart_sales.sale_count
    or bronze_sales.revenue != mart_sales.revenue
    or bronze_sales.commission != mart_sales.commission
