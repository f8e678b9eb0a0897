"""One ingestion run: for each table, new landing files -> quarantine, changelog, bronze.

Order matters for exactly-once: rejects first (keyed by file and line, so a
rerun overwrites them), then the changelog and the bronze table, each commit
carrying the checkpoint of the files it applied. A crash between commits makes
the next run re-read from the older checkpoint; Hudi's keys and ordering make
re-applying those events a no-op.

A table's run is a sequence of steps, each in its own module: plan (plan.py:
checkpoints + the source's listing), decode and count (batch.py), the commits
and the catalog (commits.py, rows from bronze_rows.py). This module only puts
them in that order and times them; results.py holds what comes out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession

from ingestion import catalog
from ingestion.batch import DecodedBatch, count_batch, count_bronze, decode_batch
from ingestion.bronze_rows import bronze_frame
from ingestion.commits import register_tables, write_bronze, write_changelog, write_quarantine
from ingestion.config import TableConfig
from ingestion.locks import table_lock
from ingestion.plan import TablePlan, plan_table, source_for
from ingestion.profile import Profiler, StepTiming
from ingestion.results import BatchCounts, BronzeCounts, IngestRun, TableResult
from ingestion.settings import Settings


def _elapsed(started: float) -> float:
    return round(time.monotonic() - started, 2)


def commit_batch(
    spark: SparkSession,
    conf: Settings,
    plan: TablePlan,
    batch: DecodedBatch,
    counts: BatchCounts,
    ingested_at: str,
    profile: Profiler,
) -> BronzeCounts:
    """The commits in exactly-once order (quarantine, changelog, bronze), then the catalog."""
    if counts.rejects:
        write_quarantine(spark, conf, plan, batch.rejects, ingested_at, profile)
    write_changelog(conf, plan, batch.events, batch.columns, profile)
    with profile.step("bronze rows"):
        bronze = bronze_frame(
            spark, plan, batch.events, batch.columns, has_truncates=counts.truncates > 0
        ).cache()
    with profile.step("bronze count"):
        written = count_bronze(bronze)
    write_bronze(conf, plan, bronze, counts.only_inserts, profile)
    with profile.step("catalog"):
        register_tables(spark, plan)
    bronze.unpersist()
    return written


def ingest_table(
    spark: SparkSession,
    conf: Settings,
    table: TableConfig,
    ingested_at: str,
    log: Callable[[str], None],
) -> TableResult:
    """Apply a table's new landing files; commit nothing when there are none.

    The table's writer lock covers it all, from reading the checkpoints to
    the last commit, so a second run of the table plans from what this one
    committed (locks.py).
    """
    started = time.monotonic()
    profile = Profiler(spark, table.name)
    with ExitStack() as held:
        with profile.step("lock"):
            held.enter_context(
                table_lock(conf.home, table.database, table.name, conf.lock_wait_seconds)
            )
        source = source_for(spark, conf, table)
        plan = plan_table(spark, conf, table, source, profile)
        if plan.batch.empty:
            return TableResult(table.name, seconds=_elapsed(started), profile=profile.steps())
        log(f"{table.name}: {plan.files} new file(s) from {table.topic}")
        batch = decode_batch(spark, plan, source, ingested_at, profile)
        with profile.step("count"):
            counts = count_batch(batch)
        written = commit_batch(spark, conf, plan, batch, counts, ingested_at, profile)
        batch.unpersist()
    return TableResult.applied(
        table.name, plan.files, counts, written, _elapsed(started), profile.steps()
    )


def ingest(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None],
    run_record: Path | None = None,
    startup: tuple[StepTiming, ...] = (),
) -> IngestRun:
    """Ingest each table once; write the run record; return the run's results.

    `startup` holds steps timed before the engine was called (the Spark
    session's start), kept with the run's own in the record.
    """
    ingested_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    started = time.monotonic()
    profile = Profiler(spark, "run")
    with profile.step("databases"):
        for database in sorted({t.database for t in tables}):
            catalog.ensure_database(spark, database, f"{conf.lake.rstrip('/')}/{database}")
    # Tables are independent; overlapping their commits hides Hudi's per-commit latency.
    with ThreadPoolExecutor(max_workers=max(1, conf.parallel_tables)) as pool:
        results = tuple(
            pool.map(lambda table: ingest_table(spark, conf, table, ingested_at, log), tables)
        )
    run = IngestRun(
        ingested_at,
        _elapsed(started),
        conf.landing,
        conf.lake,
        results,
        (*startup, *profile.steps()),
    )
    if run_record is not None:
        write_run_record(run_record, run)
    return run


def write_run_record(path: Path, run: IngestRun) -> None:
    """The run as JSON at `path` (`.lakehouse/runs/ingest-*.json`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(run.to_json())
