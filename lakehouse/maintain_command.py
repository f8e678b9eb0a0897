"""`lakehouse maintain`: compact and clean the merge-on-read bronze tables (ingestion.maintenance).

Starts Spark only when a selected table is configured `table_type: mor`; the
jobs' `maintain` step runs the same code on the job's session.
"""

from __future__ import annotations

from ingestion.maintenance import Maintained, maintain, served_merge_on_read
from ingestion.settings import settings
from ingestion.spark import build_session


def summary_line(done: list[Maintained]) -> str:
    """One line: how many tables compacted, of how many looked at, in how many seconds."""
    compacted = sum(1 for m in done if m.compacted)
    seconds = sum(m.seconds for m in done)
    return (
        f"maintain: {compacted} of {len(done)} merge-on-read table(s) compacted in {seconds:.1f}s"
    )


def run_maintain(tables: list[str] | None) -> int:
    conf = settings()
    chosen = served_merge_on_read(conf, tables)
    if not chosen:
        print("maintain: no merge-on-read table (table_type: mor in conf/tables.yml)")
        return 0
    spark = build_session("lakehouse-maintain", conf, conf.run_dir / "lakehouse-maintain.log")
    try:
        print(summary_line(maintain(spark, conf, chosen)))
    finally:
        spark.stop()
    return 0
