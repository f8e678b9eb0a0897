-- events whose revenue is in the top percentile (99th and above)
with

sales as (

    select * from {{ ref('fct_sales') }}

),

event_revenue as (

    select
        event_id,
        event_name,
        category_name,
        venue_name,
        sum(quantity_sold) as tickets_sold,
        sum(price_paid) as revenue
    from sales
    group by
        event_id,
        event_name,
        category_name,
        venue_name

),

ranked as (

    select
        *,
        percent_rank() over (order by revenue) as revenue_percentile
    from event_revenue

)

select * from ranked
where revenue_percentile >= 0.99
order by revenue desc
