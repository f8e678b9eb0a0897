"""Per buyer: average tickets per order against average revenue per order, sized by orders.

The seed dashboard's scatter: big, frequent buyers sit top right; buyers who
order rarely but buy expensive tickets stand out high and small.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import ui
from dashboard.marts import table

# A scatter of more points is unreadable and slow in the browser; these are the biggest buyers.
MAX_BUYERS = 5000
TOP = 20
SQL = f"""
with

buyers as (
    select
        buyer_id,
        count(*) as orders,
        cast(avg(quantity_sold) as double) as avg_tickets_per_order,
        cast(avg(price_paid) as double) as avg_revenue_per_order,
        cast(sum(price_paid) as double) as revenue
    from {table("fct_sales")}
    group by buyer_id
),

ranked as (
    select
        *,
        row_number() over (order by revenue desc, buyer_id) as revenue_rank
    from buyers
),

current_users as (
    select user_id, username
    from {table("dim_users")}
    where is_current
)

select
    ranked.*,
    coalesce(current_users.username, concat('buyer ', ranked.buyer_id)) as buyer
from ranked
left join current_users
    on ranked.buyer_id = current_users.user_id
where ranked.revenue_rank <= {MAX_BUYERS}
"""

st.title("Buyers: tickets per order against revenue per order")
frame = ui.query(SQL)
frame = frame.assign(
    segment=(frame["revenue_rank"] <= TOP).map({True: f"top {TOP} by revenue", False: "others"})
)

buyers, orders, tickets = st.columns(3)
buyers.metric("Buyers shown", f"{len(frame):,}")
orders.metric("Orders", f"{frame['orders'].sum():,}")
tickets.metric(
    "Average tickets per order",
    f"{(frame['avg_tickets_per_order'] * frame['orders']).sum() / frame['orders'].sum():.2f}",
)

ui.chart(
    alt.Chart(frame)
    .mark_circle(opacity=0.6)
    .encode(
        x=alt.X("avg_tickets_per_order:Q", title="Average tickets per order"),
        y=alt.Y("avg_revenue_per_order:Q", title="Average revenue per order, USD"),
        size=alt.Size("orders:Q", title="Orders", scale=alt.Scale(range=[15, 600])),
        color=alt.Color(
            "segment:N",
            title="Buyer",
            scale=alt.Scale(
                domain=[f"top {TOP} by revenue", "others"], range=["#e15759", "#4e79a7"]
            ),
        ),
        order=alt.Order("revenue_rank:Q", sort="descending"),
        tooltip=[
            alt.Tooltip("buyer:N", title="Buyer"),
            alt.Tooltip("orders:Q", title="Orders"),
            alt.Tooltip("avg_tickets_per_order:Q", title="Tickets per order", format=".2f"),
            alt.Tooltip("avg_revenue_per_order:Q", title="Revenue per order", format=",.0f"),
            alt.Tooltip("revenue:Q", title="Revenue, USD", format=",.0f"),
        ],
    )
    .properties(height=480)
)
st.caption(
    f"One dot per buyer (the {MAX_BUYERS:,} biggest by revenue at most), sized by the number of "
    "orders (sales rows in `fct_sales`); names from `dim_users`."
)
