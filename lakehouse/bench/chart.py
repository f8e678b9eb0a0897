"""Benchmark charts: a PNG drawn from a results JSON, beside it (`lakehouse bench chart FILE`).

Drawn from the JSON alone, so a chart can be drawn again, or from a run on
another machine, without running anything. Altair (the dashboard's charting
library) builds the chart; vl-convert renders it without a browser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from ingestion.errors import UserError

MIB = 1024**2
WIDTH, HEIGHT = 720, 150


def _panel(
    frame: pd.DataFrame, title: str, y: str, minutes: float, mark: str = "line"
) -> alt.Chart:
    """One panel over the whole run's minutes (every panel the same x axis)."""
    base = alt.Chart(frame, title=title, width=WIDTH, height=HEIGHT)
    marked = base.mark_line() if mark == "line" else base.mark_circle(size=12, opacity=0.5)
    x = alt.X("minute:Q", title="minute", scale=alt.Scale(domain=[0, minutes]))
    encoding = {"x": x, "y": alt.Y(f"{y}:Q", title=y)}
    if "series" in frame.columns:
        encoding["color"] = alt.Color("series:N", title=None)
    return marked.encode(**encoding)


def _memory(per_minute: list[dict[str, Any]], kind: str) -> pd.DataFrame:
    rows = [
        {"minute": m["minute"], "series": name, "MiB": value / MIB}
        for m in per_minute
        for name, value in m[kind].items()
    ]
    return pd.DataFrame(rows, columns=["minute", "series", "MiB"])


def _events(pairs: list[list[float | None]], y: str) -> pd.DataFrame:
    rows = [{"minute": at / 60, y: value} for at, value, *_ in pairs if value is not None]
    return pd.DataFrame(rows, columns=["minute", y])


# The soak's panels, top to bottom: (records, title, y, mark).
SOAK_PANELS = (
    ("sessions", "new session: select 1", "seconds", "dot"),
    ("latencies", "landed change to queryable", "seconds", "dot"),
    ("batches", "micro-batch", "seconds", "dot"),
    ("rss", "resident memory (process tree)", "MiB", "line"),
    ("old_after_gc", "old generation after GC", "MiB", "line"),
)


def soak_chart(results: dict[str, Any]) -> alt.VConcatChart:
    """Five panels over the run's minutes: sessions, latency, batches, RSS, old generation."""
    span = results["soak_seconds"] / 60
    panels = []
    for records, title, y, mark in SOAK_PANELS:
        if y == "MiB":
            frame = _memory(results["per_minute"], records)
        else:
            frame = _events(results[records], y)
        panels.append(_panel(frame, title, y, span, mark))
    title = (
        f"bench soak --scale {results['scale']:g} --rate {results['rate']} "
        f"--minutes {results['minutes']:g}"
    )
    return alt.vconcat(*panels, title=title)


def ingest_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each contender that ran: the snapshot's seconds and a change batch's mean seconds."""
    return [
        {"contender": c["label"], "phase": phase, "seconds": figures["latency_mean_seconds"]}
        for c in results["contenders"].values()
        if c["status"] == "ran"
        for phase, figures in (("snapshot", c["snapshot"]), ("change batch", c["changes"]))
        if figures["latency_mean_seconds"] is not None
    ]


def ingest_chart(results: dict[str, Any]) -> alt.FacetChart:
    """The contenders' bars, one panel for the snapshot and one for a change batch."""
    frame = pd.DataFrame(ingest_rows(results), columns=["contender", "phase", "seconds"])
    bars = (
        alt.Chart(frame, width=WIDTH, height=HEIGHT / 2)
        .mark_bar()
        .encode(
            x=alt.X("seconds:Q", title="seconds (JVM start included)"),
            y=alt.Y("contender:N", title=None, sort=None),
        )
    )
    title = f"bench ingest --scale {results['scale']:g}: seconds, shorter is faster"
    return bars.facet(row=alt.Row("phase:N", title=None, sort=["snapshot"]), title=title)


def latency_chart(results: dict[str, Any]) -> alt.LayerChart:
    """How long landed changes took to be queryable: their histogram, p50 and p95 marked."""
    frame = pd.DataFrame({"seconds": results["latencies"]}, columns=["seconds"])
    bars = (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("seconds:Q", bin=alt.Bin(maxbins=40), title="landed change to queryable (s)"),
            y=alt.Y("count():Q", title="changes"),
        )
    )
    marks = pd.DataFrame(
        [
            {"at": v, "mark": k}
            for k, v in results["latency_seconds"].items()
            if k in ("p50", "p95") and v is not None
        ],
        columns=["at", "mark"],
    )
    rules = alt.Chart(marks).mark_rule(strokeDash=[4, 3]).encode(x="at:Q", color="mark:N")
    title = (
        f"bench latency --scale {results['scale']:g} --rate {results['rate']} "
        f"--minutes {results['minutes']:g}"
    )
    return alt.layer(bars, rules, title=title)


CHARTS = {"soak": soak_chart, "ingest": ingest_chart, "latency": latency_chart}


def draw(results_file: Path) -> Path:
    """The PNG of a results JSON, written beside it; returns its path."""
    try:
        results = json.loads(results_file.read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read benchmark results {results_file}: {error}") from None
    kind = results.get("benchmark")
    if kind not in CHARTS:
        raise UserError(
            f"{results_file} holds a '{kind}' benchmark; charts are drawn for: {', '.join(CHARTS)}"
        )
    picture = results_file.with_suffix(".png")
    CHARTS[kind](results).save(str(picture), format="png", scale_factor=1.5)
    return picture
