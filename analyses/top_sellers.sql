-- sellers whose sales are in the top 0.1 percent (99.9th percentile)
with

sales as (

    select * from {{ ref('fct_sales') }}

),

sellers as (

    select * from {{ ref('int_sellers_extracted_from_users') }}

),

seller_revenue as (

    select
        seller_id,
        count(*) as sales,
        sum(quantity_sold) as tickets_sold,
        sum(price_paid) as revenue,
        sum(earnings) as earnings
    from sales
    group by seller_id

),

ranked as (

    select
        seller_revenue.*,
        sellers.username,
        sellers.full_name,
        sellers.first_sale_date,
        percent_rank() over (
            order by seller_revenue.revenue
        ) as revenue_percentile
    from seller_revenue
    left join sellers
        on seller_revenue.seller_id = sellers.user_id

)

select * from ranked
where revenue_percentile >= 0.999
order by revenue desc
