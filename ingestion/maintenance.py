"""Table services of merge-on-read bronze, off the ingest path: compaction, then clean.

A merge-on-read commit appends a batch's changes to the buckets' log files, so
its cost follows the batch, not the table; readers merge those logs until a
compaction writes new base files. Compacting here, under the table's writer
lock, keeps that rewrite out of every batch: the jobs run it before dbt reads
bronze (conf/jobs.yml), the continuous service when a poll finds nothing new,
and a write compacts inline only when maintenance is overdue
(hudi_writer.OVERDUE_DELTA_COMMITS). Decision 0022.

Hudi's own procedures do the work (`run_compaction`, `run_clean`): a
compaction killed half way is pending on the timeline, and the next
maintenance (or an overdue write) finishes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import SparkSession

from ingestion import hudi_timeline, hudi_writer
from ingestion.config import TableConfig, select_tables
from ingestion.discovery import served_tables
from ingestion.locks import table_lock
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import Settings

# Options of the compaction's write client beyond the table's own properties:
# a plan for every log file (one delta commit is enough), merged as Spark rows
# as the bronze writes merge them.
COMPACTION_OPTIONS = {
    "hoodie.compact.inline.max.delta.commits": "1",
    "hoodie.write.record.merge.custom.implementation.classes": hudi_writer.SPARK_MERGER,
}


@dataclass(frozen=True)
class Maintained:
    """One table's maintenance: whether it compacted, and the seconds it took."""

    table: str
    compacted: bool
    seconds: float


def merge_on_read_tables(tables: list[TableConfig]) -> list[TableConfig]:
    """The tables maintenance looks at: those configured `table_type: mor`."""
    return [table for table in tables if table.table_type == "mor"]


def served_merge_on_read(conf: Settings, names: list[str] | None) -> list[TableConfig]:
    """The served tables named (all when None) that are merge-on-read: what a maintain runs on."""
    return merge_on_read_tables(select_tables(served_tables(conf).tables, names))


def needs_compaction(files: dict[str, float]) -> bool:
    """Whether a delta commit completed after the newest compaction, or one is pending.

    On merge-on-read every write is a `deltacommit` and a completed `commit` a
    compaction; a requested compaction with no completed instant is pending.
    A delta commit of base files alone (a new table's first) counts too:
    Hudi then plans no compaction, and `maintain_table` reports none.
    """
    done = [(m["t"], m["action"]) for n in files if (m := hudi_timeline.COMPLETED.match(n))]
    compacted = max((t for t, action in done if action == "commit"), default="")
    if any(action == "deltacommit" and t > compacted for t, action in done):
        return True
    completed = {t for t, _ in done}
    return any(
        name.endswith(".compaction.requested") and name.split(".")[0] not in completed
        for name in files
    )


def _call(spark: SparkSession, procedure: str, **arguments: str) -> None:
    args = ", ".join(f"{name} => '{value}'" for name, value in arguments.items())
    spark.sql(f"call {procedure}({args})").collect()


def maintain_table(spark: SparkSession, conf: Settings, table: TableConfig) -> Maintained:
    """Compact and clean one merge-on-read bronze table, holding its writer lock."""
    started = time.monotonic()
    path = table_path(conf, table.database, table.name)
    with table_lock(conf.home, table.database, table.name, conf.lock_wait_seconds):
        files = hudi_timeline.timeline_files(spark, path)
        if files is None or not needs_compaction(files):
            return Maintained(table.name, False, round(time.monotonic() - started, 2))
        options = ",".join(f"{k}={v}" for k, v in COMPACTION_OPTIONS.items())
        uri = to_hadoop_uri(path)
        _call(spark, "run_compaction", op="scheduleAndExecute", path=uri, options=options)
        # Hudi's clean takes the catalog's name only (bronze is registered at its first commit).
        _call(spark, "run_clean", table=f"{table.database}.{table.name}")
        # Nothing to compact (a snapshot's base files and no log file yet) plans no compaction.
        after = hudi_timeline.timeline_files(spark, path) or {}
    compacted = _compactions(after) > _compactions(files)
    return Maintained(table.name, compacted, round(time.monotonic() - started, 2))


def _compactions(files: dict[str, float]) -> int:
    """Completed `commit` instants: on merge-on-read, its compactions."""
    return sum(
        1 for n in files if (m := hudi_timeline.COMPLETED.match(n)) and m["action"] == "commit"
    )


def maintain(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None] = print,
) -> list[Maintained]:
    """Every merge-on-read table of `tables` in turn; one line each that compacted."""
    done = []
    for table in merge_on_read_tables(tables):
        result = maintain_table(spark, conf, table)
        if result.compacted:
            log(f"{table.database}.{table.name}: compacted in {result.seconds:.1f}s")
        done.append(result)
    return done
