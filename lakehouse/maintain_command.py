"""`lakehouse maintain`: the table services off the ingest path (ingestion.maintenance).

Merge-on-read bronze compacted, changelogs clustered; Spark starts only when
a service is due. The jobs' `maintain` step runs the same code on the job's
session.
"""

from __future__ import annotations

from ingestion.config import select_tables
from ingestion.discovery import served_tables
from ingestion.maintenance import Maintained, due_tables, maintain
from ingestion.settings import settings
from ingestion.spark import build_session


def summary_line(done: list[Maintained]) -> str:
    """One line: how many tables compacted and clustered, of how many, in how many seconds."""
    compacted = sum(1 for m in done if m.compacted)
    clustered = sum(1 for m in done if m.clustered)
    seconds = sum(m.seconds for m in done)
    return (
        f"maintain: {len(done)} table(s) in {seconds:.1f}s; bronze compacted: {compacted}, "
        f"changelog clustered: {clustered}"
    )


def run_maintain(tables: list[str] | None) -> int:
    conf = settings()
    chosen = select_tables(served_tables(conf).tables, tables)
    due = due_tables(conf, chosen)
    if not due:
        print(f"maintain: nothing due on {len(chosen)} table(s)")
        return 0
    spark = build_session("lakehouse-maintain", conf, conf.run_dir / "lakehouse-maintain.log")
    try:
        print(summary_line(maintain(spark, conf, due)))
    finally:
        spark.stop()
    return 0
