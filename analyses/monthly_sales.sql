-- sales, tickets and revenue by year and month
with

sales as (

    select * from {{ ref('fct_sales') }}

),

monthly as (

    select
        year(sale_date) as sale_year,
        month(sale_date) as sale_month,
        count(*) as sales,
        sum(quantity_sold) as tickets_sold,
        sum(price_paid) as revenue,
        sum(commission) as commission
    from sales
    group by
        year(sale_date),
        month(sale_date)

)

select * from monthly
order by sale_year, sale_month
