"""Table services off the ingest path: bronze's compaction and clean, the changelog's clustering.

A merge-on-read commit appends a batch's changes to the buckets' log files, so
its cost follows the batch, not the table; readers merge those logs until a
compaction writes new base files. A changelog takes each batch as a bulk
insert of new files, none rewritten; clustering joins its small files. Both
run here, under the table's writer lock, to keep those rewrites out of every
batch: the jobs run it before dbt reads bronze (conf/jobs.yml), the continuous
service when a poll finds nothing new (under a steady stream, one due table
between two micro-batches: `maintain_one`), and a write runs them inline only when
maintenance is overdue (hudi_writer.OVERDUE_DELTA_COMMITS,
OVERDUE_CHANGELOG_COMMITS). Decisions 0022 and 0023.

Hudi's own procedures do the work (`run_compaction`, `run_clean`,
`run_clustering`): a compaction or clustering killed half way is pending on
the timeline, and the next maintenance finishes it (a pending clustering may
be finished first by the changelog's next write, whose inline table services
run it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import SparkSession

from ingestion import catalog, hudi_timeline, hudi_writer
from ingestion.config import TableConfig
from ingestion.locks import table_lock
from ingestion.paths import table_path, to_hadoop_uri, to_local_path
from ingestion.settings import Settings
from ingestion.table_state import has_record_index

# Options of the compaction's write client beyond the table's own properties:
# a plan for every log file (one delta commit is enough), merged as Spark rows
# and written without bloom filters, as the bronze writes are (decision 0008).
COMPACTION_OPTIONS = {
    "hoodie.compact.inline.max.delta.commits": "1",
    "hoodie.write.record.merge.custom.implementation.classes": hudi_writer.SPARK_MERGER,
    **hudi_writer.NO_BLOOM_FILTERS,
}


@dataclass(frozen=True)
class Maintained:
    """One table's maintenance: whether it compacted bronze, clustered the changelog, how long."""

    table: str
    compacted: bool
    clustered: bool
    seconds: float

    @property
    def did(self) -> str:
        """What it did, for a log line; empty when nothing was due."""
        return " and ".join(
            word
            for word, done in (("compacted", self.compacted), ("clustered", self.clustered))
            if done
        )


def _completed(files: dict[str, float]) -> list[tuple[str, str]]:
    return [(m["t"], m["action"]) for n in files if (m := hudi_timeline.COMPLETED.match(n))]


def _pending(files: dict[str, float], action: str) -> bool:
    """Whether an instant of `action` (compaction, clustering) is requested and not completed."""
    completed = {t for t, _ in _completed(files)}
    return any(
        name.endswith(f".{action}.requested") and name.split(".")[0] not in completed
        for name in files
    )


def needs_compaction(files: dict[str, float], after_commits: int = 1) -> bool:
    """Whether `after_commits` delta commits completed since the newest compaction, or one
    is pending.

    On merge-on-read every write is a `deltacommit` and a completed `commit` a
    compaction. A delta commit of base files alone (a new table's first)
    counts too: Hudi then plans no compaction, and `maintain_table` reports none.
    """
    done = _completed(files)
    compacted = max((t for t, action in done if action == "commit"), default="")
    since = sum(1 for t, action in done if action == "deltacommit" and t > compacted)
    return since >= after_commits or _pending(files, "compaction")


def needs_clustering(files: dict[str, float], after_commits: int) -> bool:
    """Whether `after_commits` commits completed since the last clustering, or one is pending.

    A changelog is copy-on-write: its writes are `commit`s, a clustering a `replacecommit`.
    """
    done = _completed(files)
    clustered = max((t for t, action in done if action == "replacecommit"), default="")
    since = sum(1 for t, action in done if action == "commit" and t > clustered)
    return since >= after_commits or _pending(files, "clustering")


def _local_timeline(conf: Settings, database: str, name: str) -> dict[str, float] | None:
    """A table's timeline files read without Spark ({} with no table); None when remote."""
    path = table_path(conf, database, name)
    if to_local_path(path) is None:
        return None
    return hudi_timeline.timeline_files(None, path) or {}


def due_tables(
    conf: Settings, tables: list[TableConfig], compaction_commits: int = 1
) -> list[TableConfig]:
    """The tables with a service due, read off their timelines without Spark.

    A merge-on-read bronze table is due after `compaction_commits` delta
    commits. All of them when the lake is not local: the services look for
    themselves, under the lock.
    """
    due = []
    for table in tables:
        bronze = _local_timeline(conf, table.database, table.name)
        changelog = _local_timeline(conf, table.database, table.changelog_name)
        if bronze is None or changelog is None:
            return tables
        compact = table.table_type == "mor" and needs_compaction(bronze, compaction_commits)
        if compact or needs_clustering(changelog, conf.changelog_cluster_commits):
            due.append(table)
    return due


def _call(spark: SparkSession, procedure: str, **arguments: str) -> None:
    args = ", ".join(f"{name} => '{value}'" for name, value in arguments.items())
    spark.sql(f"call {procedure}({args})").collect()


def _options(options: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items())


def _count(files: dict[str, float] | None, action: str) -> int:
    return sum(1 for _, done in _completed(files or {}) if done == action)


def _compact(spark: SparkSession, conf: Settings, table: TableConfig, after_commits: int) -> bool:
    """Compact and clean merge-on-read bronze after `after_commits` delta commits, if due."""
    path = table_path(conf, table.database, table.name)
    files = hudi_timeline.timeline_files(spark, path)
    if files is None or not needs_compaction(files, after_commits):
        return False
    uri = to_hadoop_uri(path)
    metadata = hudi_writer.table_service_options(has_record_index(spark, path))
    _call(
        spark,
        "run_compaction",
        op="scheduleAndExecute",
        path=uri,
        options=_options({**COMPACTION_OPTIONS, **metadata}),
    )
    # Hudi's clean takes the catalog's name only (bronze is registered at its first commit).
    _call(spark, "run_clean", table=f"{table.database}.{table.name}", options=_options(metadata))
    # Nothing to compact (a snapshot's base files and no log file yet) plans no compaction.
    after = hudi_timeline.timeline_files(spark, path)
    if _count(after, "commit") == _count(files, "commit"):
        return False
    catalog.forget_listings(spark, table.database, list(catalog.merge_on_read_names(table.name)))
    return True


def _cluster(spark: SparkSession, conf: Settings, table: TableConfig) -> bool:
    """Cluster the changelog's small files when due; whether a clustering completed.

    Its replaced files go with the writes' own cleans (every tenth commit).
    """
    path = table_path(conf, table.database, table.changelog_name)
    files = hudi_timeline.timeline_files(spark, path)
    if files is None or not needs_clustering(files, conf.changelog_cluster_commits):
        return False
    options = _options(
        {**hudi_writer.clustering_options(), **hudi_writer.table_service_options(False)}
    )
    _call(
        spark, "run_clustering", op="scheduleAndExecute", path=to_hadoop_uri(path), options=options
    )
    after = hudi_timeline.timeline_files(spark, path)
    if _count(after, "replacecommit") <= _count(files, "replacecommit"):
        return False
    catalog.forget_listings(spark, table.database, [table.changelog_name])
    return True


def maintain_table(
    spark: SparkSession, conf: Settings, table: TableConfig, compaction_commits: int = 1
) -> Maintained:
    """One table's services under its writer lock: bronze compacted (mor), changelog clustered."""
    started = time.monotonic()
    with table_lock(conf.home, table.database, table.name, conf.lock_wait_seconds):
        compacted = table.table_type == "mor" and _compact(spark, conf, table, compaction_commits)
        clustered = _cluster(spark, conf, table)
    return Maintained(table.name, compacted, clustered, round(time.monotonic() - started, 2))


def maintain(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None] = print,
) -> list[Maintained]:
    """Every table of `tables` in turn; one line each that did something."""
    done = []
    for table in tables:
        result = maintain_table(spark, conf, table)
        _report(result, table, log)
        done.append(result)
    return done


def maintain_one(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None] = print,
) -> Maintained | None:
    """The first table of `tables` with a service due under a steady stream, and no other.

    Bronze is due after `stream_compaction_commits` delta commits: one table
    between two micro-batches spreads the tables' compactions over the
    stream instead of stalling one micro-batch with all of them. On a lake
    that is not local each table is looked at, under its lock, until one
    had a service due.
    """
    commits = conf.stream_compaction_commits
    for table in due_tables(conf, tables, commits):
        result = maintain_table(spark, conf, table, commits)
        _report(result, table, log)
        if result.did:
            return result
    return None


def _report(result: Maintained, table: TableConfig, log: Callable[[str], None]) -> None:
    if result.did:
        log(f"{table.database}.{table.name}: {result.did} in {result.seconds:.1f}s")
