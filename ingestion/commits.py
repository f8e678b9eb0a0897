"""Steps 4 to 7 of a table's run: the Hudi commits, then the catalog entries.

The engine calls them in the exactly-once order its module docstring gives:
quarantine, changelog, bronze. The changelog and bronze commits carry the
plan's checkpoint in their commit metadata; the quarantine needs none, as its
rows are keyed by file and line and a rerun overwrites them.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ingestion import catalog, hudi_writer
from ingestion.batch import DecodedBatch
from ingestion.checkpoint import table_exists, write_options
from ingestion.decode.events import CDC_COLUMNS
from ingestion.hudi_timeline import write_phases
from ingestion.locks import table_lock
from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri
from ingestion.plan import TablePlan
from ingestion.profile import Profiler
from ingestion.results import BatchCounts
from ingestion.settings import Settings
from ingestion.table_state import BUCKETS_KEY, LAST_POSITION_KEY, NEWEST_SOURCE_KEY

log = logging.getLogger(__name__)


def timed_write(
    profile: Profiler,
    step: str,
    frame: DataFrame,
    path: str,
    options: dict[str, str],
    operation: str,
    new_table: bool,
) -> None:
    """One Hudi commit as a profiled step, split into Hudi's phases (hudi_timeline.py)."""
    with profile.step(step) as detail:
        started = time.time()
        hudi_writer.write(frame, path, options, operation, new_table)
        detail.update(write_phases(frame.sparkSession, path, started, time.time()))


# The rejects' columns (ingestion.decode.events.Decoded.rejects), for an empty quarantine.
REJECTS_SCHEMA = "raw string, source_file string, line bigint, reason string"


def quarantine_frame(rejects: DataFrame, table_name: str, ingested_at: str) -> DataFrame:
    """The quarantine's rows: the rejected lines, their table and when they were set aside."""
    return rejects.select(
        "raw",
        "source_file",
        "line",
        F.lit(table_name).alias("table_name"),
        "reason",
        F.lit(ingested_at).cast("timestamp").alias("quarantined_at"),
    )


def write_quarantine(
    spark: SparkSession,
    conf: Settings,
    plan: TablePlan,
    rejects: DataFrame,
    ingested_at: str,
    profile: Profiler,
) -> None:
    """Upsert the batch's rejected lines, with their reason, into the database's quarantine."""
    table = plan.table
    quarantine = quarantine_frame(rejects, table.name, ingested_at)
    # One quarantine table per database, shared by every bronze table's run:
    # the same writer lock as a table's, across threads and processes.
    with table_lock(conf.home, table.database, QUARANTINE, conf.lock_wait_seconds):
        new_quarantine = not table_exists(spark, plan.paths.quarantine)
        timed_write(
            profile,
            "quarantine write",
            quarantine,
            plan.paths.quarantine,
            hudi_writer.quarantine_options(table.database, conf.shuffle_partitions),
            "upsert",
            new_quarantine,
        )
        catalog.register(spark, table.database, QUARANTINE, plan.paths.quarantine)


def ensure_quarantine(spark: SparkSession, conf: Settings, database: str) -> None:
    """The database's quarantine, empty, from its first ingest on: always there to query.

    Asked of the catalog once per engine (`Engine._ensure_databases`); only a
    database without one pays an empty Hudi commit, with the schema and
    options of `write_quarantine`, so the later upserts go into the same table.
    """
    if catalog.is_registered(spark, database, QUARANTINE):
        return
    path = table_path(conf, database, QUARANTINE)
    with table_lock(conf.home, database, QUARANTINE, conf.lock_wait_seconds):
        if not table_exists(spark, path):
            empty = spark.createDataFrame([], REJECTS_SCHEMA)
            hudi_writer.write(
                quarantine_frame(empty, "", "1970-01-01"),
                path,
                hudi_writer.quarantine_options(database, 1),
                "upsert",
                new_table=True,
            )
        catalog.register(spark, database, QUARANTINE, path)


def stored_last_position(spark: SparkSession, plan: TablePlan, profile: Profiler) -> str | None:
    """The changelog's highest source position: recorded in its commits, else read once.

    A changelog whose commits do not record it yet (written before they did)
    has its position column read once; every commit from then on records it.
    One without a completed commit (its first killed) has no rows to read.
    """
    state = plan.changelog
    if not state.exists or state.instant is None or state.last_position is not None:
        return state.last_position
    with profile.step("changelog position"):
        stored = spark.read.format("hudi").load(to_hadoop_uri(plan.paths.changelog))
        return stored.agg(F.max("_cdc_position")).first()[0]


@dataclass(frozen=True)
class StoredRange:
    """Stored source positions a batch's events may repeat, both ends inclusive."""

    first: str | None
    last: str


def repeatable_range(
    exists: bool, stored_last: str | None, counts: BatchCounts
) -> StoredRange | None:
    """Where a batch may repeat the changelog's stored events; None when it cannot.

    An event id holds the event's source position, so an event that sorts
    after every stored one cannot be stored yet. Only the events at or before
    the stored position (a redelivery, a late event, a rerun after a crash,
    another key at a snapshot's position) can, and only stored events of the
    batch's own positions can match them. A changelog with no position
    recorded or read holds no row.
    """
    first = counts.first_position
    if not exists or stored_last is None or (first is not None and first > stored_last):
        return None
    return StoredRange(first, stored_last)


def unstored_events(
    spark: SparkSession, path: str, events: DataFrame, stored: StoredRange
) -> DataFrame:
    """The events whose ids the changelog does not hold: an anti join on the stored ids.

    Only the stored ids of the batch's own range of positions can match, so
    only those are read (decision 0027).
    """
    position = F.col("_cdc_position")
    held = spark.read.format("hudi").load(to_hadoop_uri(path)).where(position <= stored.last)
    if stored.first is not None:
        held = held.where(position >= stored.first)
    return events.join(held.select("_cdc_event_id"), "_cdc_event_id", "left_anti")


def write_changelog(
    spark: SparkSession,
    conf: Settings,
    plan: TablePlan,
    batch: DecodedBatch,
    counts: BatchCounts,
    profile: Profiler,
) -> None:
    """Add every event not stored yet (truncates included) to the changelog, in one commit.

    A bulk insert: files of their own, no stored file rewritten, and a
    redelivery writes nothing (decisions 0023, 0027). The commit records the
    checkpoint and the highest position stored (LAST_POSITION_KEY), whose
    next batch then looks up only the events at or before it.
    """
    stored_last = stored_last_position(spark, plan, profile)
    positions = [p for p in (stored_last, counts.last_position) if p is not None]
    last = {LAST_POSITION_KEY: max(positions)} if positions else {}
    parallelism = hudi_writer.parallelism(counts.events, conf.shuffle_partitions)
    events = batch.events.select(*batch.columns, *CDC_COLUMNS, "_cdc_event_id")
    stored = repeatable_range(plan.changelog_exists, stored_last, counts)
    if stored is not None:
        events = unstored_events(spark, plan.paths.changelog, events, stored)
    timed_write(
        profile,
        "changelog write",
        events,
        plan.paths.changelog,
        {
            **hudi_writer.changelog_options(plan.table, parallelism),
            **write_options(plan.batch.checkpoint),
            **last,
        },
        "bulk_insert",
        not plan.changelog_exists,
    )


@functools.cache
def _warn_kept_layout(table: str, kept: hudi_writer.BronzeLayout) -> None:
    """Once per process: the continuous service would say it at every micro-batch."""
    log.warning(
        "%s: the bronze table is %s with %s and stays so; table_type and buckets in "
        "conf/tables.yml apply to new tables (drop the table and its changelog to re-create it)",
        table,
        "merge-on-read" if kept.merge_on_read else "copy-on-write",
        f"{kept.buckets} bucket(s)" if kept.buckets else "a global index",
    )


def bronze_layout(conf: Settings, plan: TablePlan) -> hudi_writer.BronzeLayout:
    """A new table's layout from its config; an existing one keeps its own.

    A table's type and buckets cannot change once it has data (Hudi would look
    for a key's old version in the wrong file group), so a config that asks
    for others is reported, not applied. Until a commit completed (a first one
    killed, then rolled back), no stored row is placed by buckets, so the
    config's still apply.
    """
    state = plan.bronze
    threshold = conf.record_index_min_mb * 1024**2
    record_index = hudi_writer.use_record_index(state.data_bytes, state.record_index, threshold)
    wanted = hudi_writer.new_layout(plan.table, record_index)
    if not plan.bronze_exists:
        return wanted
    buckets = state.buckets if state.checkpoint.offsets else wanted.buckets
    kept = hudi_writer.BronzeLayout.of(state.merge_on_read, buckets, record_index)
    if (kept.merge_on_read, kept.buckets) != (wanted.merge_on_read, wanted.buckets):
        _warn_kept_layout(plan.table.name, kept)
    return kept


def write_bronze(
    conf: Settings, plan: TablePlan, bronze: DataFrame, counts: BatchCounts, profile: Profiler
) -> None:
    """Merge the bronze rows into the current state, with the checkpoint.

    The commit also records the newest source time bronze holds (NEWEST_SOURCE_KEY).

    A new table fed only snapshot reads and creates is bulk-inserted; anything
    else needs Hudi's merge to keep the latest change per key.
    """
    new_bronze = not plan.bronze_exists
    parallelism = hudi_writer.parallelism(counts.events, conf.shuffle_partitions)
    layout = bronze_layout(conf, plan)
    buckets = {BUCKETS_KEY: str(layout.buckets)} if layout.buckets is not None else {}
    times = [t for t in (plan.bronze.newest_source_ms, counts.newest_source_ms) if t is not None]
    newest = {NEWEST_SOURCE_KEY: str(max(times))} if times else {}
    timed_write(
        profile,
        "bronze write",
        bronze,
        plan.paths.bronze,
        {
            **hudi_writer.bronze_options(plan.table, parallelism, layout),
            **write_options(plan.batch.checkpoint),
            **buckets,
            **newest,
        },
        "bulk_insert" if new_bronze and counts.only_inserts else "upsert",
        new_bronze,
    )


def register_tables(spark: SparkSession, conf: Settings, plan: TablePlan) -> None:
    """Catalog entries for the changelog and bronze tables (once; a no-op after)."""
    table = plan.table
    catalog.register(spark, table.database, table.changelog_name, plan.paths.changelog)
    names = (
        catalog.merge_on_read_names(table.name)
        if bronze_layout(conf, plan).merge_on_read
        else {table.name: None}
    )
    for name, read_optimized in names.items():
        catalog.register(spark, table.database, name, plan.paths.bronze, read_optimized)
