"""Sell-through: tickets sold over tickets listed, by venue or by event."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import ui
from dashboard.marts import table

# Grain -> (key and label columns of fct_listings, label shown on the chart). Events
# first: there are always many, while a small TICKIT sample may list at few venues.
GRAINS = {
    "Event": (["event_id", "event_name", "venue_name", "event_starts_at"], "event_label"),
    "Venue": (["venue_id", "venue_name", "venue_city", "venue_state"], "venue_name"),
}
MIN_SHOWN, MAX_SHOWN, DEFAULT_SHOWN = 5, 50, 25


def sell_through_sql(columns: list[str]) -> str:
    """Tickets listed (fct_listings) and sold (fct_sales) per key, at one grain."""
    key = columns[0]
    listed_columns = ",\n        ".join(columns)
    return f"""
with

listed as (
    select
        {listed_columns},
        sum(tickets_listed) as tickets_listed
    from {table("fct_listings")}
    group by {", ".join(columns)}
),

sold as (
    select
        {key},
        sum(quantity_sold) as tickets_sold,
        cast(sum(price_paid) as double) as revenue
    from {table("fct_sales")}
    group by {key}
)

select
    listed.*,
    coalesce(sold.tickets_sold, 0) as tickets_sold,
    coalesce(sold.revenue, 0) as revenue
from listed
left join sold
    on listed.{key} = sold.{key}
where listed.tickets_listed > 0
"""


st.title("Sell-through by venue or event")
grain = st.radio("By", list(GRAINS), horizontal=True)
columns, label = GRAINS[grain]
frame = ui.query(sell_through_sql(columns))
frame = frame.assign(sell_through=frame["tickets_sold"] / frame["tickets_listed"])
if grain == "Event":
    frame = frame.assign(
        event_label=frame["event_name"] + " (" + frame["event_starts_at"].astype(str).str[:10] + ")"
    )

overall, listed, sold = st.columns(3)
overall.metric(
    "Overall sell-through", f"{frame['tickets_sold'].sum() / frame['tickets_listed'].sum():.1%}"
)
listed.metric("Tickets listed", f"{frame['tickets_listed'].sum():,}")
sold.metric("Tickets sold", f"{frame['tickets_sold'].sum():,}")

limit = len(frame)
if len(frame) > MIN_SHOWN:
    limit = st.slider(
        f"{grain}s with the most tickets listed",
        MIN_SHOWN,
        min(MAX_SHOWN, len(frame)),
        min(DEFAULT_SHOWN, len(frame)),
    )
shown = frame.nlargest(limit, "tickets_listed")
ui.chart(
    alt.Chart(shown)
    .mark_bar()
    .encode(
        x=alt.X(
            "sell_through:Q",
            title="Sell-through (tickets sold / listed)",
            axis=alt.Axis(format="%"),
        ),
        y=alt.Y(
            f"{label}:N",
            title=grain,
            sort="-x",
            axis=alt.Axis(labelLimit=320, labelOverlap=False),
        ),
        color=alt.Color("sell_through:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=[
            alt.Tooltip(f"{label}:N", title=grain),
            alt.Tooltip("tickets_listed:Q", title="Tickets listed", format=","),
            alt.Tooltip("tickets_sold:Q", title="Tickets sold", format=","),
            alt.Tooltip("sell_through:Q", title="Sell-through", format=".1%"),
            alt.Tooltip("revenue:Q", title="Revenue, USD", format=",.0f"),
        ],
    )
    # One readable row per bar.
    .properties(height=max(240, 30 * len(shown)))
)
st.caption(
    f"The {limit} {grain.lower()}s with the most tickets listed (`fct_listings.tickets_listed`), "
    "sorted by the share of those tickets sold (`fct_sales.quantity_sold`)."
)
