"""The ingestion engine: for each table, new source records -> quarantine, changelog, bronze.

Order matters for exactly-once: rejects first (keyed by file and line, so a
rerun overwrites them), then the changelog and the bronze table, each commit
carrying the checkpoint of the records it applied. A crash between commits
makes the next run re-read from the older checkpoint; Hudi's keys and
ordering make re-applying those events a no-op.

A table's run is a sequence of steps, each in its own module: plan (plan.py:
the tables' states + the source's pending batch), decode and count (batch.py),
the commits and the catalog (commits.py, rows from bronze_rows.py). This
module only puts them in that order and times them; results.py holds what
comes out. `Engine` keeps what it learnt of each table between micro-batches,
so the one-shot `ingest()` and the continuous service (continuous.py) are the
same code: one micro-batch, or one after another in the same Spark session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ingestion import catalog
from ingestion.batch import (
    CountedBatch,
    DecodedBatch,
    count_batch,
    count_bronze,
    decode_batch,
    resolve_unavailable,
)
from ingestion.bronze_rows import bronze_frame
from ingestion.commits import (
    ensure_quarantine,
    register_tables,
    write_bronze,
    write_changelog,
    write_quarantine,
)
from ingestion.config import TableConfig
from ingestion.locks import table_lock
from ingestion.plan import TableMemory, TablePlan, plan_table, source_for
from ingestion.profile import Profiler, StepTiming
from ingestion.results import BatchCounts, BronzeCounts, IngestRun, TableResult, ingestion_time
from ingestion.settings import Settings
from ingestion.sources.base import Source


def _elapsed(started: float) -> float:
    return round(time.monotonic() - started, 2)


def bronze_counts(
    spark: SparkSession,
    plan: TablePlan,
    batch: DecodedBatch,
    counts: BatchCounts,
    profile: Profiler,
) -> tuple[DataFrame, BronzeCounts]:
    """The bronze rows and their counts; counted by a Spark job only when truncates add rows.

    Without truncate deletes, bronze holds one row per non-truncate event and
    deletes are the `d` events: the batch's op counts already say it all.
    """
    truncating = counts.truncates > 0 and plan.table.truncate != "ignore"
    with profile.step("bronze rows"):
        bronze = bronze_frame(spark, plan, batch.events, batch.columns, truncating)
    if not truncating:
        rows = sum(n for op, n in counts.ops.items() if op != "t")
        return bronze, BronzeCounts.from_totals(rows=rows, deleted=counts.ops.get("d", 0))
    bronze = bronze.cache()
    with profile.step("bronze count"):
        return bronze, count_bronze(bronze)


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
    write_changelog(spark, conf, plan, batch, counts, profile)
    bronze, written = bronze_counts(spark, plan, batch, counts, profile)
    write_bronze(conf, plan, bronze, counts, profile)
    bronze.unpersist()
    # Registered by location, the catalog entries follow every commit by themselves.
    if not plan.memory.registered or not (plan.bronze_exists and plan.changelog_exists):
        with profile.step("catalog"):
            register_tables(spark, conf, plan)
        plan.memory.registered = True
    return written


def longest_first(tables: list[TableConfig], memory: dict[str, TableMemory]) -> list[TableConfig]:
    """The order a micro-batch starts its tables in: the longest in the last one first.

    Most of a micro-batch's events are in the tables that take longest (at
    --scale 1, listing, sales and users hold 95% of them); started last, they
    waited for the small ones and committed at the micro-batch's very end.
    Started first, they commit earlier, and the small tables fill the cores
    after them. The first micro-batch (nothing measured yet) keeps config order.
    """
    return sorted(tables, key=lambda table: -memory[table.name].seconds)


class Engine:
    """Micro-batches over a set of tables in one Spark session (a service may add tables).

    Keeps, per table, the states read at the last plan (reused while nobody
    else commits) and whether its catalog entries are known to exist.
    """

    def __init__(
        self,
        spark: SparkSession,
        conf: Settings,
        tables: list[TableConfig],
        log: Callable[[str], None],
    ) -> None:
        self.spark = spark
        self.conf = conf
        self.tables: list[TableConfig] = []
        self.log = log
        self.memory: dict[str, TableMemory] = {}
        self.sources: dict[str, Source[Any]] = {}
        self._databases_ready = False
        self._databases_lock = threading.Lock()
        self.add_tables(tables)
        # One pool for the engine's life: its threads (each pinned to a JVM
        # thread by PySpark) are reused by every micro-batch, not made anew.
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, conf.parallel_tables), thread_name_prefix="ingest"
        )

    def __enter__(self) -> Engine:
        return self

    def add_tables(self, tables: list[TableConfig]) -> None:
        """Serve these tables too, from the next micro-batch (a continuous service's new ones)."""
        databases = {t.database for t in self.tables}
        for table in tables:
            self.tables.append(table)
            self.memory[table.name] = TableMemory()
            self.sources[table.name] = source_for(self.spark, self.conf, table)
        if {t.database for t in tables} - databases:
            with self._databases_lock:
                self._databases_ready = False  # a new database is created before its first commit

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True)

    def ingest_table(
        self, table: TableConfig, ingested_at: str, stop: threading.Event | None = None
    ) -> TableResult:
        """Apply a table's pending records; commit nothing when there are none.

        The table's writer lock covers it all, from reading the checkpoints to
        the last commit, so a second run of the table plans from what this one
        committed (locks.py). A set `stop` skips a table not yet started.
        """
        started = time.monotonic()
        profile = Profiler(self.spark, table.name)
        if stop is not None and stop.is_set():
            return TableResult(table.name)
        with ExitStack() as held:
            with profile.step("lock"):
                held.enter_context(
                    table_lock(
                        self.conf.home, table.database, table.name, self.conf.lock_wait_seconds
                    )
                )
            return self.apply_pending(table, ingested_at, profile, started)

    def apply_pending(
        self, table: TableConfig, ingested_at: str, profile: Profiler, started: float
    ) -> TableResult:
        """Plan, decode and commit a table's pending records; the caller holds its lock."""
        source = self.sources[table.name]
        plan = plan_table(self.spark, self.conf, table, source, profile, self.memory[table.name])
        if plan.batch.empty:
            return TableResult(table.name, seconds=_elapsed(started), profile=profile.steps())
        self.log(f"{table.name}: {plan.files} new item(s) from {table.topic}")
        self._ensure_databases(profile)
        placeholder = self.conf.unavailable_value_placeholder
        batch = decode_batch(self.spark, plan, source, ingested_at, profile, placeholder)
        with profile.step("count"):
            counted = count_batch(batch)
        counts = counted.counts
        batch.release_lines()
        batch = self._resolve_unavailable(plan, batch, counted, profile)
        written = commit_batch(self.spark, self.conf, plan, batch, counts, ingested_at, profile)
        batch.release()
        return TableResult.applied(
            table.name, plan.files, counts, written, _elapsed(started), profile.steps()
        )

    def _resolve_unavailable(
        self, plan: TablePlan, batch: DecodedBatch, counted: CountedBatch, profile: Profiler
    ) -> DecodedBatch:
        """The batch with the values Debezium could not read (TOAST) resolved, and said so.

        A batch without any is returned as it is, with no Spark job.
        """
        if not counted.unavailable:
            return batch
        with profile.step("unavailable values"):
            batch, unknown = resolve_unavailable(self.spark, plan, batch, counted)
        total = sum(counted.unavailable.values())
        message = f"{plan.table.name}: {total} value(s) Debezium could not read (TOAST) resolved"
        if unknown:
            columns = ", ".join(f"{column} {n}" for column, n in unknown.items())
            message += f"; never stored before, so stored as null: {columns}"
        self.log(message)
        return batch

    def _ensure_databases(self, profile: Profiler) -> None:
        """The catalog's databases and their quarantines, once, and only when a table has
        something to commit.

        The first catalog call starts the metastore client (tens of seconds on
        a busy machine): a run that finds nothing new never pays it.
        """
        with self._databases_lock:
            if self._databases_ready:
                return
            with profile.step("databases"):
                for database in sorted({t.database for t in self.tables}):
                    location = f"{self.conf.lake.rstrip('/')}/{database}"
                    catalog.ensure_database(self.spark, database, location)
                    ensure_quarantine(self.spark, self.conf, database)
            self._databases_ready = True

    def run_batch(
        self, stop: threading.Event | None = None, startup: tuple[StepTiming, ...] = ()
    ) -> IngestRun:
        """One micro-batch: every table's pending records, tables side by side.

        `startup` holds steps timed before (the Spark session's start), kept
        with the run's own in the record.
        """
        ingested_at = ingestion_time()
        started = time.monotonic()
        # Tables are independent; overlapping their commits hides Hudi's per-commit latency.
        order = longest_first(self.tables, self.memory)
        done = {
            result.table: result
            for result in self._pool.map(lambda t: self.ingest_table(t, ingested_at, stop), order)
        }
        for result in done.values():
            self.memory[result.table].seconds = result.seconds
        results = tuple(done[table.name] for table in self.tables)  # config order
        return IngestRun(
            ingested_at,
            _elapsed(started),
            self.conf.landing,
            self.conf.lake,
            results,
            startup,
        )


def ingest(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None],
    startup: tuple[StepTiming, ...] = (),
) -> IngestRun:
    """Ingest each table once (one micro-batch); return the results."""
    with Engine(spark, conf, tables, log) as engine:
        return engine.run_batch(startup=startup)
