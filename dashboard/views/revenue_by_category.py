"""Revenue by category over time: monthly gross sales (or commission) per event category."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import ui
from dashboard.marts import table

SQL = f"""
select
    cast(trunc(sale_date, 'MM') as string) as sale_month,
    category_group,
    category_name,
    cast(sum(price_paid) as double) as price_paid,
    cast(sum(commission) as double) as commission,
    sum(quantity_sold) as tickets_sold
from {table("fct_sales")}
group by 1, 2, 3
order by 1, 2, 3
"""
MEASURES = {"Gross sales (price paid)": "price_paid", "Commission (TICKIT's revenue)": "commission"}

st.title("Revenue by category over time")
frame = ui.query(SQL)
label = st.radio("Measure", list(MEASURES), horizontal=True)
measure = MEASURES[label]

total, tickets, months = st.columns(3)
total.metric(label, f"${frame[measure].sum():,.0f}")
tickets.metric("Tickets sold", f"{frame['tickets_sold'].sum():,}")
months.metric("Months", frame["sale_month"].nunique())

ui.chart(
    alt.Chart(frame)
    .mark_area()
    .encode(
        x=alt.X("yearmonth(sale_month):T", title="Month of sale"),
        y=alt.Y(f"sum({measure}):Q", title=f"{label}, USD", stack="zero"),
        color=alt.Color("category_name:N", title="Category"),
        tooltip=[
            alt.Tooltip("yearmonth(sale_month):T", title="Month"),
            alt.Tooltip("category_group:N", title="Group"),
            alt.Tooltip("category_name:N", title="Category"),
            alt.Tooltip(f"sum({measure}):Q", title="USD", format=",.0f"),
            alt.Tooltip("sum(tickets_sold):Q", title="Tickets", format=","),
        ],
    )
    .properties(height=420)
)
st.caption(f"Source: `{table('fct_sales')}`, by month of `sale_date` and `category_name`.")
