"""Marketing: who the users are, and which interests the non-buyers have (campaign targets)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import ui
from dashboard.marts import table

st.title("Marketing")

# The interest flags are the mart's likes_* columns (dbt's `interest_columns()`), read from
# the mart itself, so a new interest needs no change here.
INTERESTS = tuple(
    column.removeprefix("likes_")
    for column in ui.query(f"describe {table('dim_non_buyers')}")["col_name"]
    if column.startswith("likes_")
)
_PAIRS = ", ".join(f"'{name}', likes_{name}" for name in INTERESTS)
NON_BUYERS_SQL = f"""
with

interests as (
    select stack({len(INTERESTS)}, {_PAIRS}) as (interest, likes)
    from {table("dim_non_buyers")}
)

select interest, count(*) as non_buyers
from interests
where likes
group by interest
"""
USERS_SQL = f"""
select
    state,
    count(*) as users,
    sum(case when version_number > 1 then 1 else 0 end) as users_with_changes
from {table("dim_users")}
where is_current
group by state
"""

non_buyers = ui.query(NON_BUYERS_SQL)
users = ui.query(USERS_SQL)

total, changed, targets = st.columns(3)
total.metric("Current users", f"{users['users'].sum():,}")
changed.metric("Users whose profile changed", f"{users['users_with_changes'].sum():,}")
targets.metric("Non-buyers' interests (mentions)", f"{non_buyers['non_buyers'].sum():,}")

left, right = st.columns(2)
with left:
    st.subheader("Non-buyers by interest")
    ui.chart(
        alt.Chart(non_buyers)
        .mark_bar(color="#f28e2b")
        .encode(
            x=alt.X("non_buyers:Q", title="Users who never bought and like it"),
            y=alt.Y("interest:N", title="Interest", sort="-x"),
            tooltip=["interest:N", alt.Tooltip("non_buyers:Q", format=",")],
        )
        .properties(height=520)
    )
with right:
    st.subheader("Current users by state (top 20)")
    ui.chart(
        alt.Chart(users.nlargest(20, "users"))
        .mark_bar()
        .encode(
            x=alt.X("users:Q", title="Users"),
            y=alt.Y("state:N", title="State", sort="-x", axis=alt.Axis(labelOverlap=False)),
            tooltip=["state:N", alt.Tooltip("users:Q", format=","), "users_with_changes:Q"],
        )
        .properties(height=520)
    )
st.caption(
    f"Sources: `{table('dim_non_buyers')}` (users without a purchase, one flag per interest) "
    f"and the current versions of `{table('dim_users')}` (SCD type 2)."
)
