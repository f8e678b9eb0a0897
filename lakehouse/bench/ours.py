"""Worker: our ingestion (`ingestion.engine.ingest`) of whatever is new in a landing zone.

Run as `python -m lakehouse.bench.ours --landing L --lake K --database D`, one
process per phase, exactly the code path of `lakehouse ingest` (its driver's JIT
chosen by the same look ahead at the new files); with `--maintain`, the code
path of `lakehouse maintain` instead, after the last phase.
"""

from __future__ import annotations

import argparse
import time

from ingestion.config import TableConfig, load_tables
from ingestion.engine import ingest
from ingestion.maintenance import due_tables, maintain
from ingestion.nothing_new import batch_settings, look_ahead
from ingestion.settings import Settings, load_settings
from ingestion.spark import build_session
from lakehouse.bench.measure import report_result


def maintain_tables(conf: Settings, tables: list[TableConfig]) -> None:
    """`lakehouse maintain`'s work on the bench's tables, timed as a phase's is.

    As `lakehouse maintain`, no Spark session when no service is due.
    """
    started = time.monotonic()
    due = due_tables(conf, tables)
    spark = build_session("lakehouse-bench-ours-maintain", conf) if due else None
    ready = time.monotonic()
    done = maintain(spark, conf, due, log=print) if spark is not None else []
    ended = time.monotonic()
    if spark is not None:
        spark.stop()
    report_result(
        {
            "startup_seconds": round(ready - started, 2),
            "work_seconds": round(ended - ready, 2),
            "tables": {m.table: m.seconds for m in done},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--landing", required=True)
    parser.add_argument("--lake", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--maintain", action="store_true", help="maintain, do not ingest")
    args = parser.parse_args()

    conf = load_settings({"landing": args.landing, "lake": args.lake})
    tables = list(load_tables(database=args.database).values())
    if args.maintain:
        maintain_tables(conf, tables)
        return
    started = time.monotonic()
    spark = build_session("lakehouse-bench-ours", batch_settings(conf, look_ahead(conf, tables)))
    ready = time.monotonic()
    run = ingest(spark, conf, tables, log=print)
    done = time.monotonic()
    spark.stop()
    report_result(
        {
            "events": run.events,
            "quarantined": run.quarantined,
            "startup_seconds": round(ready - started, 2),
            "work_seconds": round(done - ready, 2),
            "tables": {r.table: r.seconds for r in run.tables},
        }
    )


if __name__ == "__main__":
    main()
