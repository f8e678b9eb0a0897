"""Streamlit helpers shared by the pages: cached queries, error display, chart output."""

from __future__ import annotations

import time

import altair as alt
import pandas as pd
import streamlit as st

from dashboard.data_as_of import marts_as_of
from dashboard.marts import MartsUnavailable, read
from ingestion.settings import settings

# Short: the marts change once a day, but a freshly built mart should show up soon.
CACHE_SECONDS = 60


@st.cache_data(ttl=CACHE_SECONDS, show_spinner="Querying the marts through the Thrift server ...")
def _cached_read(sql: str) -> pd.DataFrame:
    return read(sql)


def query(sql: str) -> pd.DataFrame:
    """The query's rows; on failure or no rows, a clear message and the page stops there."""
    try:
        frame = _cached_read(sql)
    except MartsUnavailable as error:
        st.error(str(error))
        st.stop()
    if frame.empty:
        st.warning("The marts hold no rows for this chart yet; run the daily job to load data.")
        st.stop()
    return frame


def chart(spec: alt.Chart | alt.LayerChart) -> None:
    """Show an Altair chart, drawn as SVG so its marks are inspectable (and testable) in the DOM."""
    spec = spec.properties(usermeta={"embedOptions": {"renderer": "svg"}})
    st.altair_chart(spec, width="stretch")


def data_as_of(marts: tuple[str, ...]) -> None:
    """The page's "data as of" line: a badge (fresh or behind), the time, its age, the build.

    A caption rather than a warning box, so the page's charts still draw under it.
    """
    conf = settings()
    found = marts_as_of(conf, marts, time.time())
    if found is None:
        st.caption(
            ":gray-badge[data as of unknown] No job has recorded a build of these marts in "
            f"`{conf.home}`; the daily job (`lakehouse jobs run daily`) records one."
        )
        return
    limit = f"{conf.freshness_warn_hours:g} h"
    badge = f":orange-badge[behind: older than {limit}]" if found.behind else ":green-badge[fresh]"
    st.caption(
        f"{badge} Data as of {found.data_as_of} ({pd.Timedelta(seconds=round(found.age_seconds))}"
        f" ago): the newest source change these marts reflect, built by the `{found.job}` job "
        f"started {found.built_at}."
    )
