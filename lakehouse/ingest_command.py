"""`lakehouse ingest`: one or repeated runs over the selected tables, with summaries.

Exit codes: 0 all applied, 3 applied but some records were quarantined
(see <bronze_database>._quarantine), 2 a user error (config, stack).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from rich.table import Table

from ingestion.config import load_tables, select_tables
from ingestion.engine import ingest
from ingestion.preflight import check_run
from ingestion.results import TableResult
from ingestion.settings import load_settings
from ingestion.spark import build_session
from lakehouse.output import console

EXIT_QUARANTINED = 3


def summary_table(results: Sequence[TableResult]) -> Table:
    """The per-table closing summary."""
    table = Table(title="ingest summary", title_justify="left")
    for column in ("table", "files", "events r/c/u/d/t", "tombstones", "upserted", "deleted",
                   "quarantined", "seconds", "events/s"):  # fmt: skip
        table.add_column(column, justify="left" if column == "table" else "right")
    for r in results:
        ops = "/".join(str(r.events.get(op, 0)) for op in "rcudt")
        table.add_row(r.table, str(r.files), ops, str(r.tombstones), str(r.upserted),
                      str(r.deleted), str(r.quarantined), f"{r.seconds:.1f}",
                      f"{r.events_per_second:,.0f}")  # fmt: skip
    return table


def run_ingest(
    tables: list[str] | None = None,
    landing: str | None = None,
    lake: str | None = None,
    continuous: bool = False,
    interval: float = 60.0,
    max_runs: int | None = None,
    log: Callable[[str], None] = print,
) -> int:
    """Ingest once (or poll when continuous); print summaries; return the exit code."""
    overrides = {k: v for k, v in {"landing": landing, "lake": lake}.items() if v}
    conf = load_settings(overrides)
    selected = select_tables(load_tables(), tables)
    check_run(conf, landing=any(t.source.kind == "landing" for t in selected))
    spark = build_session("lakehouse-ingest", conf)
    quarantined = False
    runs = 0
    while True:
        started = time.monotonic()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        record = conf.home / "runs" / f"ingest-{stamp}.json"
        run = ingest(spark, conf, selected, log, run_record=record)
        console.print(summary_table(run.tables))
        quarantined = quarantined or run.quarantined > 0
        log(
            f"ingested {run.events:,} events from {run.files} files into "
            f"{len(run.touched)} table(s), {run.quarantined} quarantined, "
            f"in {time.monotonic() - started:.1f}s; run record {record}"
        )
        runs += 1
        if not continuous or (max_runs is not None and runs >= max_runs):
            break
        time.sleep(interval)
    return EXIT_QUARANTINED if quarantined else 0
