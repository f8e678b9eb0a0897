"""Streamlit helpers shared by the pages: cached queries, error display, chart output."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard.marts import MartsUnavailable, read

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
