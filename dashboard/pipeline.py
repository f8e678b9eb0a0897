"""What the Pipeline page shows, as plain data: runs, quarantine, freshness.

Plain Python (no Streamlit) so it is testable on its own. Freshness and
backlog are `lakehouse status`'s own (`lakehouse.status.lake_status`: the Hudi
timelines read as files, no Spark); the runs are the JSON run records every
command leaves under `<home>/runs/` (failed runs included, with their
error); the quarantine and the reconcile checks are the bronze database's
`_quarantine` and `_reconcile` tables, read through the Thrift server like
the marts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.marts import MartsUnavailable, NotBuilt, read
from ingestion.paths import QUARANTINE, RECONCILED
from ingestion.settings import Settings

# A record's kind is its file name before the time stamp: job-daily, ingest, main, reconcile.
_KIND = re.compile(r"^(?P<kind>.+?)-\d{8}T\d{6}")
RUN_COLUMNS = ["started_at", "run", "status", "seconds", "events", "error"]
SAMPLES = 5


@dataclass(frozen=True)
class Quarantine:
    """The quarantine's records by table and reason, and the newest raw records of each reason."""

    counts: pd.DataFrame  # table_name, reason, records, last_quarantined_at
    samples: pd.DataFrame  # table_name, reason, raw, source_file, line
    note: str = ""  # why it could not be read, when it could not


def _events(record: dict[str, Any]) -> int:
    """Events a run applied: an ingest's tables, or a job's ingest steps."""
    tables = record.get("tables") or []
    if isinstance(tables, list) and tables and isinstance(tables[0], dict):
        return sum(sum(t.get("events", {}).values()) for t in tables)
    details = [step.get("detail") or {} for step in record.get("steps") or []]
    return sum(
        totals.get("events", 0)
        for detail in details
        if isinstance(detail.get("tables"), dict)
        for totals in detail["tables"].values()
    )


def _run_row(path: Path) -> dict[str, Any] | None:
    """One run record as a row of the runs panel; None for a file that is not one."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or (kind := _KIND.match(path.name)) is None:
        return None
    return {
        "started_at": str(record.get("started_at") or record.get("checked_at") or ""),
        "run": kind["kind"],
        "status": str(record.get("status", "")),
        "seconds": float(record.get("seconds") or 0.0),
        "events": _events(record),
        "error": str(record.get("error", "")),
    }


def runs(home: Path, limit: int = 30) -> pd.DataFrame:
    """The newest run records under `<home>/runs/`, newest first."""
    paths = sorted((home / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    rows = [row for row in map(_run_row, paths[:limit]) if row is not None]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _read_all(conf: Settings, queries: list[str]) -> tuple[list[pd.DataFrame], str]:
    """The queries' rows; none (and no note) before the table exists; a note when unreadable."""
    try:
        return [read(sql, conf) for sql in queries], ""
    except NotBuilt:  # nothing written to it yet
        return [pd.DataFrame() for _ in queries], ""
    except MartsUnavailable as error:
        return [pd.DataFrame() for _ in queries], str(error)


def quarantine(conf: Settings) -> Quarantine:
    """The bronze database's quarantine by reason, with samples; empty before any reject."""
    table = f"{conf.bronze_database}.{QUARANTINE}"
    (counts, samples), note = _read_all(conf, [
        "select table_name, reason, count(*) as records, "
        f"cast(max(quarantined_at) as string) as last_quarantined_at from {table} "
        "group by table_name, reason order by records desc",
        "select table_name, reason, raw, source_file, line from ("
        "select *, row_number() over (partition by table_name, reason "
        f"order by quarantined_at desc, line) as nth from {table}) "
        f"where nth <= {SAMPLES} order by table_name, reason, nth",
    ])  # fmt: skip
    return Quarantine(counts, samples, note)


def reconciled(conf: Settings) -> tuple[pd.DataFrame, str]:
    """Each table's last `lakehouse reconcile` line; empty before the first check."""
    table = f"{conf.bronze_database}.{RECONCILED}"
    (latest,), note = _read_all(conf, [
        "select cast(checked_at as string) as checked_at, table_name, source_table, equal, "
        "source_rows, bronze_rows, differences, first_differences, note from ("
        "select *, row_number() over (partition by table_name order by checked_at desc) as nth "
        f"from {table}) where nth = 1 order by table_name",
    ])  # fmt: skip
    return latest, note
