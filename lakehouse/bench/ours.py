"""Worker: our ingestion (`ingestion.engine.ingest`) of whatever is new in a landing zone.

Run as `python -m lakehouse.bench.ours --landing L --lake K --database D`, one
process per phase, exactly the code path of `lakehouse ingest` (its driver's JIT
chosen by the same look ahead at the new files).
"""

from __future__ import annotations

import argparse
import time

from ingestion.config import load_tables
from ingestion.engine import ingest
from ingestion.nothing_new import batch_settings, look_ahead
from ingestion.settings import load_settings
from ingestion.spark import build_session
from lakehouse.bench.measure import report_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--landing", required=True)
    parser.add_argument("--lake", required=True)
    parser.add_argument("--database", required=True)
    args = parser.parse_args()

    conf = load_settings({"landing": args.landing, "lake": args.lake})
    tables = list(load_tables(database=args.database).values())
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
