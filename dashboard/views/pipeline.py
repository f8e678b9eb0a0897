"""Pipeline: how far each bronze table is behind its source, what was set aside, how runs went.

The same figures as `lakehouse status` (read from the Hudi timelines, no
Spark), the quarantine and the reconcile checks through the Thrift server,
and the run records under the home's `runs/` folder.
"""

from __future__ import annotations

from dataclasses import asdict

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import pipeline
from dashboard.ui import CACHE_SECONDS, chart
from ingestion.settings import settings
from lakehouse.errors_text import error_text
from lakehouse.status import LakeStatus, lake_status

conf = settings()
STATUS_COLUMNS = {
    "table": "table",
    "source": "source",
    "committed_at": "last commit",
    "data_as_of": "data as of",
    "lag_seconds": "lag s",
    "backlog": "backlog",
    "backlog_unit": "unit",
    "behind_seconds": "oldest unapplied s",
    "note": "note",
}
# Seconds to a tenth, with thousands separators, in every table of the page.
SECONDS = {name: "{:,.1f}" for name in ("lag s", "oldest unapplied s", "seconds")}


@st.cache_data(ttl=CACHE_SECONDS, show_spinner="Reading the quarantine through Thrift ...")
def _quarantine() -> pipeline.Quarantine:
    return pipeline.quarantine(conf)


def _freshness(status: LakeStatus) -> None:
    """The newest source time bronze holds, its age, and every table's line."""
    newest = max((t.data_as_of for t in status.tables if t.data_as_of), default=None)
    lag = min((t.lag_seconds for t in status.tables if t.lag_seconds is not None), default=None)
    left, right, threshold = st.columns([2, 2, 1])
    left.metric("Data as of (UTC)", newest.replace("T", " ")[:19] if newest else "no data yet")
    right.metric("Lag", "" if lag is None else str(pd.Timedelta(seconds=round(lag))))
    threshold.metric("Behind threshold (s)", f"{status.behind_threshold_seconds:g}")
    if status.behind:
        st.warning(f"Behind past {status.behind_threshold_seconds:g} s: {', '.join(status.behind)}")
    st.caption(
        f"Checked at {status.checked_at}. Lag is now minus the newest source time bronze holds; "
        "the oldest unapplied change is what the threshold follows."
    )
    frame = pd.DataFrame([asdict(t) for t in status.tables], columns=list(STATUS_COLUMNS))
    st.table(frame.rename(columns=STATUS_COLUMNS).style.format(SECONDS, na_rep=""))


def _service(status: LakeStatus) -> None:
    """The continuous service's health file, as it last wrote it."""
    st.subheader("Continuous service")
    health = status.service
    if health is None:
        st.markdown("No health file: `lakehouse ingest --continuous` has not run in this home.")
        return
    st.markdown(
        f"**{health.get('state')}** (pid {health.get('pid')}), "
        f"last poll {health.get('last_poll_at')}, last batch {health.get('last_batch_at')}, "
        f"updated {health.get('updated_at')}; error: {health.get('error') or 'none'}"
    )


def _quarantine_panel() -> None:
    st.subheader("Quarantine")
    found = _quarantine()
    if found.note:
        st.error(found.note)
    elif found.counts.empty:
        st.markdown(f"No record quarantined in `{conf.bronze_database}`.")
    else:
        st.table(found.counts)
        st.caption(f"The newest {pipeline.SAMPLES} raw records of each reason:")
        st.table(found.samples)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner="Reading the reconcile checks through Thrift ...")
def _reconciled() -> tuple[pd.DataFrame, str]:
    return pipeline.reconciled(conf)


def _reconcile_panel() -> None:
    st.subheader("Bronze against the source")
    latest, note = _reconciled()
    if note:
        st.error(note)
    elif latest.empty:
        st.markdown("No check yet: `lakehouse reconcile` compares bronze with its sources.")
    else:
        st.caption("Each table's last `lakehouse reconcile`, the first differing keys of each:")
        st.table(latest)


def _runs_panel() -> None:
    st.subheader("Runs")
    runs = pipeline.runs(conf.home)
    if runs.empty:
        st.markdown(f"No run records under `{conf.home / 'runs'}` yet.")
        return
    applied = runs[runs["events"] > 0]
    if not applied.empty:
        bars = (
            alt.Chart(applied)
            .mark_bar()
            .encode(
                x=alt.X("started_at:N", title="run started (UTC)", sort="ascending"),
                y=alt.Y("events:Q", title="events applied"),
                color=alt.Color("run:N", title="run"),
                tooltip=["started_at", "run", "events", "seconds"],
            )
        )
        chart(bars.properties(title="Events applied per run", height=260))
    st.table(runs.style.format({"seconds": SECONDS["seconds"]}))


st.title("Pipeline")
try:
    lake = lake_status(conf)
except Exception as error:  # a user's config error: its one line, not a stack trace
    st.error(error_text(error))
    st.stop()
_freshness(lake)
_service(lake)
_quarantine_panel()
_reconcile_panel()
_runs_panel()
