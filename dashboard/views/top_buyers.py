"""The top 20 buyers' share of revenue: the seed dashboard's pie."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import ui
from dashboard.marts import table

TOP = 20
SQL = f"""
with

buyer_revenue as (
    select
        buyer_id,
        cast(sum(price_paid) as double) as revenue,
        count(*) as orders
    from {table("fct_sales")}
    group by buyer_id
),

ranked as (
    select
        *,
        row_number() over (order by revenue desc, buyer_id) as revenue_rank
    from buyer_revenue
),

current_users as (
    select user_id, username
    from {table("dim_users")}
    where is_current
)

select
    ranked.revenue_rank,
    coalesce(current_users.username, concat('buyer ', ranked.buyer_id)) as buyer,
    ranked.revenue,
    ranked.orders
from ranked
left join current_users
    on ranked.buyer_id = current_users.user_id
where ranked.revenue_rank <= {TOP}

union all

select
    {TOP + 1} as revenue_rank,
    concat('all other buyers (', count(*), ')') as buyer,
    sum(revenue) as revenue,
    sum(orders) as orders
from ranked
where revenue_rank > {TOP}
"""
# Tableau's 20 colours for the top buyers; grey for everybody else.
TABLEAU20 = [
    "#4e79a7", "#a0cbe8", "#f28e2b", "#ffbe7d", "#59a14f", "#8cd17d", "#b6992d", "#f1ce63",
    "#499894", "#86bcb6", "#e15759", "#ff9d9a", "#79706e", "#bab0ac", "#d37295", "#fabfd2",
    "#b07aa1", "#d4a6c8", "#9d7660", "#d7b5a6",
]  # fmt: skip
OTHERS_COLOUR = "#d9d9d9"

st.title(f"Top {TOP} buyers' share of revenue")
frame = ui.query(SQL).dropna(subset=["revenue"]).sort_values("revenue_rank")
top = frame[frame["revenue_rank"] <= TOP]
total = frame["revenue"].sum()

share, buyers_revenue, biggest = st.columns(3)
share.metric(f"Top {TOP} buyers' share", f"{top['revenue'].sum() / total:.1%}")
buyers_revenue.metric(f"Top {TOP} buyers' revenue", f"${top['revenue'].sum():,.0f}")
biggest.metric("Biggest buyer", f"{top['buyer'].iloc[0]}", f"${top['revenue'].iloc[0]:,.0f}")

with_others = st.toggle("Include all other buyers", value=True)
shown = frame if with_others else top
shown = shown.assign(share=shown["revenue"] / shown["revenue"].sum())
colours = TABLEAU20[: len(top)] + ([OTHERS_COLOUR] if len(shown) > len(top) else [])

ui.chart(
    alt.Chart(shown)
    .mark_arc(innerRadius=60, stroke="white")
    .encode(
        theta=alt.Theta("revenue:Q", stack=True),
        order=alt.Order("revenue_rank:Q"),
        color=alt.Color(
            "buyer:N",
            title="Buyer (by revenue rank)",
            sort=list(shown["buyer"]),
            scale=alt.Scale(domain=list(shown["buyer"]), range=colours),
            # Below the pie in columns: a list of 21 on the right is taller than the chart.
            legend=alt.Legend(orient="bottom", columns=4, labelLimit=220, symbolLimit=0),
        ),
        tooltip=[
            alt.Tooltip("revenue_rank:Q", title="Rank"),
            alt.Tooltip("buyer:N", title="Buyer"),
            alt.Tooltip("revenue:Q", title="Revenue, USD", format=",.0f"),
            alt.Tooltip("share:Q", title="Share", format=".1%"),
            alt.Tooltip("orders:Q", title="Orders", format=","),
        ],
    )
    .properties(height=660)
)
st.caption(
    "Revenue is the price buyers paid (`fct_sales.price_paid`); buyer names from the current "
    "version of `dim_users`."
)
