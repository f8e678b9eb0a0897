-- sales, tickets and revenue by category group and category
with

sales as (

    select * from {{ ref('fct_sales') }}

),

by_category as (

    select
        category_group,
        category_name,
        count(*) as sales,
        sum(quantity_sold) as tickets_sold,
        sum(price_paid) as revenue
    from sales
    group by
        category_group,
        category_name

)

select * from by_category
order by revenue desc
