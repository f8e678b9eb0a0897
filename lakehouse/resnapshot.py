"""Rebuild one bronze table from a fresh snapshot of its source table.

The fix for a schema change bronze cannot follow (a narrowing, text where a
number was): decoding quarantines the events that need it (decode/types.py)
and names this fix. The table's bronze and changelog are moved aside, kept
whole under a new folder name, and new ones start from a fresh snapshot at the
replaced tables' checkpoint, so every later event applies exactly once and
nothing before the snapshot is read again:

- a Kafka source: an ad-hoc incremental snapshot, asked of the connector
  through Debezium's signalling table; its `r` events follow on the topic,
  interleaved with the live changes, and every run applies them as they come
  (the continuous service too);
- landing files: the snapshot's sink files the user gives, committed as the
  new tables' first commit.

All under the table's writer lock. A rebuild interrupted after the move is
finished by running it again: the journal (resnapshot_journal.py) keeps the
checkpoint and where the replaced tables went.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from ingestion.checkpoint import table_exists
from ingestion.config import TableConfig
from ingestion.engine import Engine
from ingestion.errors import UserError
from ingestion.locks import table_lock
from ingestion.paths import TablePaths, table_path, to_hadoop_uri
from ingestion.profile import Profiler
from ingestion.resnapshot_journal import Replaced, clear_journal, replaced, write_journal
from ingestion.results import TableResult, ingestion_time
from ingestion.settings import Settings
from ingestion.sources.snapshot import SnapshotFiles
from ingestion.table_state import read_state
from lakehouse import reconcile
from lakehouse.cdc.databases import SIGNAL_TABLE

# How long a Kafka rebuild waits for the snapshot's first events before it leaves them
# to the next runs.
SIGNAL_WAIT_SECONDS = 60


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuild did: where the replaced tables are, and the first batch it applied."""

    table: str
    kept: dict[str, str]
    applied: TableResult
    signalled: str | None  # the data collection an incremental snapshot was asked for


def check_request(table: TableConfig, snapshot_folder: str | None) -> None:
    """A Kafka table's snapshot comes from its connector, a landing table's from the user."""
    kafka = table.source.kind == "kafka"
    if kafka and snapshot_folder:
        raise UserError(
            f"{table.name} reads Kafka: its snapshot comes from the connector, leave out --from"
        )
    if not kafka and not snapshot_folder:
        raise UserError(
            f"{table.name} reads landing files: give the fresh snapshot's sink files with "
            f"--from FOLDER (FOLDER/topics/{table.topic}/...)"
        )


def _move(spark: SparkSession, source: str, target: str) -> None:
    """Rename a table's folder, unless it is gone already (a rerun after the move)."""
    hadoop = spark._jvm.org.apache.hadoop.fs
    origin, kept = hadoop.Path(to_hadoop_uri(source)), hadoop.Path(to_hadoop_uri(target))
    fs = origin.getFileSystem(spark._jsc.hadoopConfiguration())
    if fs.exists(kept) or not fs.exists(origin):
        return
    if not fs.rename(origin, kept):
        raise UserError(f"could not move {source} to {target}: check the lake's permissions")


def _journal(
    spark: SparkSession, conf: Settings, table: TableConfig, snapshot_folder: str | None
) -> Replaced:
    """The rebuild's record: the one under way, else a new one from bronze's checkpoint.

    A record is under way while the table is not yet moved aside or not yet committed
    again; one whose kept and rebuilt tables both exist is a finished rebuild's."""
    paths = TablePaths.of(conf, table)
    state = read_state(spark, paths.bronze, table.topic)
    exists = state.exists
    record = replaced(conf, table)
    if record is not None and not (exists and table_exists(spark, record.kept["bronze"])):
        if record.snapshot_folder != snapshot_folder:
            record = replace(record, snapshot_folder=snapshot_folder)
            write_journal(conf, table, record)
        return record
    if not exists:
        raise UserError(
            f"{table.name}: no bronze table at {paths.bronze} to rebuild; "
            f"`lakehouse ingest --tables {table.name}` creates it"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    kept = {
        "bronze": table_path(conf, table.database, f"{table.name}__replaced_{stamp}"),
        "changelog": table_path(conf, table.database, f"{table.changelog_name}__replaced_{stamp}"),
    }
    record = Replaced(state.checkpoint, kept, ingestion_time(), snapshot_folder)
    write_journal(conf, table, record)
    return record


def resnapshot(
    spark: SparkSession,
    conf: Settings,
    table: TableConfig,
    snapshot_folder: str | None,
    log: Callable[[str], None],
) -> Rebuilt:
    """Move the table aside, start it again from a fresh snapshot, apply what is there."""
    check_request(table, snapshot_folder)
    kafka = table.source.kind == "kafka"
    with table_lock(conf.home, table.database, table.name, conf.lock_wait_seconds):
        record = _journal(spark, conf, table, snapshot_folder)
        paths = TablePaths.of(conf, table)
        _move(spark, paths.bronze, record.kept["bronze"])
        _move(spark, paths.changelog, record.kept["changelog"])
        log(f"{table.name}: bronze and changelog kept at {record.kept['bronze']} and "
            f"{record.kept['changelog']}")  # fmt: skip
        signalled = signal_snapshot(conf, table) if kafka else None
        if signalled:
            log(f"{table.name}: incremental snapshot of {signalled} asked of the connector")
        with Engine(spark, conf, [table], log) as engine:
            if snapshot_folder:
                engine.sources[table.name] = SnapshotFiles(
                    spark, snapshot_folder, table.topic, record.checkpoint
                )
            applied = _first_batch(engine, table, kafka)
        if table_exists(spark, paths.bronze):
            clear_journal(conf, table)
    return Rebuilt(table.name, record.kept, applied, signalled)


def _first_batch(engine: Engine, table: TableConfig, kafka: bool) -> TableResult:
    """The new tables' first commit: the snapshot files, or on Kafka the first of the
    snapshot's events, which the connector sends within seconds of the signal; a wait
    past SIGNAL_WAIT_SECONDS leaves them to the next runs (the journal says where they
    start)."""
    deadline = time.monotonic() + (SIGNAL_WAIT_SECONDS if kafka else 0)
    while True:
        profile = Profiler(engine.spark, table.name)
        applied = engine.apply_pending(table, ingestion_time(), profile, time.monotonic())
        if applied.committed or time.monotonic() >= deadline:
            return applied
        time.sleep(1)


def signal_snapshot(conf: Settings, table: TableConfig) -> str:
    """Ask the table's connector for an ad-hoc incremental snapshot of it (a row in the
    signalling table of its schema); return the data collection asked for. The source
    database is reached as `lakehouse reconcile` reaches it."""
    try:
        source = reconcile.source_of(table)
    except reconcile.NotCompared as error:
        raise UserError(f"{table.name}: cannot reach its source database: {error}") from error
    collection = f"{source.schema}.{source.name}"
    signal = f"{source.dialect.column(source.schema)}.{source.dialect.column(SIGNAL_TABLE)}"
    data = json.dumps({"data-collections": [collection], "type": "incremental"})
    with closing(reconcile.connect(conf, source)) as connection:
        with connection.cursor() as cursor:
            cursor.execute(
                f"insert into {signal} (id, type, data) values (%s, 'execute-snapshot', %s)",
                (str(uuid.uuid4()), data),
            )
        connection.commit()
    return collection


def summary_line(rebuilt: Rebuilt) -> str:
    """The command's closing line: what the new tables hold, what is still to come."""
    applied = rebuilt.applied
    line = (
        f"{rebuilt.table}: rebuilt from a fresh snapshot, {applied.upserted:,} row(s) "
        f"upserted from {applied.files} item(s); the replaced tables are kept at "
        f"{rebuilt.kept['bronze']}"
    )
    if rebuilt.signalled:
        line += (
            "; the snapshot's events follow on the topic: the continuous service applies "
            f"them, or `lakehouse ingest --tables {rebuilt.table}`"
        )
    return line
