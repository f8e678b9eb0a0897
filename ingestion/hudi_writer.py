"""Writes through the Hudi Spark datasource: options per table kind, one place.

Bronze tables take the latest change per key by `_cdc_position` through Hudi's
own ordering field and EVENT_TIME_ORDERING merge mode: within a batch the
combine step keeps the highest position, across batches an incoming record
older than the stored one is ignored.

A bronze table's layout (`BronzeLayout`) is fixed when it is created:

- With `buckets` (conf/tables.yml): Hudi's bucket index. A key's file group
  is a hash of the key, so a write looks nothing up: no join of the batch's
  keys against the table's, and half the Spark jobs of a commit. A
  copy-on-write commit then rewrites the buckets its keys fall in, one task
  each, where a table in one file rewrote it in one task (listing's bronze
  write of a 1% change batch at --scale 1: 14.2 s -> 11.0 s with 4 buckets);
  a merge-on-read one appends to their log files, and maintenance compacts
  them off the ingest path (ingestion/maintenance.py).
- Without: the index follows the table's size. A large table uses Hudi's
  record-level index (in the metadata table): lookups cost the same whatever
  the table's size. A small one uses the simple index without a metadata
  table: joining the batch's keys against the table's key column costs less
  than the metadata table's own commit, which every write otherwise pays
  (measured: 11 to 43 s of a 3-row change batch's bronze write at --scale
  0.1, docs/benchmarks.md). Both are global for a partitioned table (a key
  whose partition value changes is moved, never copied); an unpartitioned
  table has one partition anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyspark.sql import DataFrame

from ingestion.config import TableConfig
from ingestion.paths import to_hadoop_uri

ORDERING_COLUMN = {"source_position": "_cdc_position", "source_ts": "_cdc_source_ts"}
HARD_DELETE_COLUMN = "_hoodie_is_deleted"
# Event-time ordering over Spark's rows (Hudi's choice for the strategy of
# hoodie.record.merge.mode EVENT_TIME_ORDERING when the Spark engine writes).
SPARK_MERGER = "org.apache.hudi.DefaultSparkRecordMerger"


# Events one Hudi write task takes before another is worth its start-up: a
# 500-event change batch is one task (one file group touched, one small
# file), not `shuffle_partitions` tasks of a few rows each.
EVENTS_PER_TASK = 250_000

# A changelog's "small" files, which clustering joins. No write adds to them:
# Hudi's small-file handling would read and rewrite one to add a few events.
CHANGELOG_SMALL_FILE_BYTES = 8 * 1024**2

# A changelog takes every batch as a bulk insert: new files, none rewritten
# (commits.write_changelog). Maintenance clusters the files under
# CHANGELOG_SMALL_FILE_BYTES into files of up to this size
# (changelog_cluster_commits of conf/lakehouse.yml); a write clusters inline
# only past OVERDUE_CHANGELOG_COMMITS, when nobody maintains. Decision 0023.
CHANGELOG_CLUSTERED_FILE_BYTES = 128 * 1024**2
OVERDUE_CHANGELOG_COMMITS = 30

# A merge-on-read write compacts inline only past this many delta commits
# since the last compaction: maintenance is overdue (nobody ran
# `lakehouse maintain` or a job), and readers would merge ever more log files.
OVERDUE_DELTA_COMMITS = 10


# Column statistics serve data skipping on wide scans; bronze is read whole.
NO_COLUMN_STATS = {"hoodie.metadata.index.column.stats.enable": "false"}
NO_METADATA_TABLE = {"hoodie.metadata.enable": "false"}
# Hudi writes a bloom filter of the keys into every file's footer, read only
# by its bloom index; a table looked up another way hashes every key for
# nothing (decision 0008).
NO_BLOOM_FILTERS = {"hoodie.parquet.bloom.filter.enabled": "false"}
RECORD_INDEX = {
    "hoodie.index.type": "RECORD_INDEX",
    "hoodie.metadata.global.record.level.index.enable": "true",
    "hoodie.record.index.update.partition.path": "true",
}


def parallelism(events: int, most: int) -> int:
    """Hudi's shuffle parallelism for a batch of `events`: one task per EVENTS_PER_TASK."""
    return max(1, min(most, math.ceil(events / EVENTS_PER_TASK)))


def _key_options(name: str, database: str, keys: tuple[str, ...], partitions: tuple[str, ...]):
    if partitions:
        generator = "org.apache.hudi.keygen.ComplexKeyGenerator"
    elif len(keys) == 1:
        generator = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    else:
        generator = "org.apache.hudi.keygen.ComplexKeyGenerator"
    return {
        "hoodie.table.name": name,
        "hoodie.database.name": database,
        "hoodie.datasource.write.recordkey.field": ",".join(keys),
        "hoodie.datasource.write.partitionpath.field": ",".join(partitions),
        "hoodie.datasource.write.keygenerator.class": generator,
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }


def _common_options(parallelism: int) -> dict[str, str]:
    return {
        "hoodie.upsert.shuffle.parallelism": str(parallelism),
        "hoodie.insert.shuffle.parallelism": str(parallelism),
        "hoodie.bulkinsert.shuffle.parallelism": str(parallelism),
        "hoodie.delete.shuffle.parallelism": str(parallelism),
        "hoodie.combine.before.insert": "true",
        "hoodie.combine.before.upsert": "true",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        **NO_COLUMN_STATS,
    }


def _event_time_merge(ordering: str) -> dict[str, str]:
    """The latest change per key by `ordering`, merged as Spark rows, never as Avro records.

    Without a Spark merger Hudi turns every incoming row into an Avro record,
    and a copy-on-write commit reads each stored row back as one and wraps
    its schema anew for the key and the ordering value: 27% of the
    continuous service's task samples (Java Flight Recorder, --scale 1 at
    1,000 events/s). Spark's merger keeps rows as Spark's own (a warm
    3,000-row commit into `sales` 0.84x; docs/benchmarks.md, "Spark rows").
    """
    return {
        "hoodie.table.ordering.fields": ordering,
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.write.record.merge.custom.implementation.classes": SPARK_MERGER,
    }


@dataclass(frozen=True)
class BronzeLayout:
    """How a bronze table is stored and indexed; fixed at its creation (commits.bronze_layout)."""

    merge_on_read: bool = False
    buckets: int | None = None  # Hudi's bucket index with this many buckets
    record_index: bool = False  # else the simple index (both global)

    @classmethod
    def of(cls, merge_on_read: bool, buckets: int | None, record_index: bool) -> BronzeLayout:
        """`record_index`: whether the table uses it if it has no buckets (which need no index)."""
        return cls(merge_on_read, buckets, buckets is None and record_index)


def new_layout(table: TableConfig, record_index: bool) -> BronzeLayout:
    """The layout a new bronze table is created with: its config's."""
    return BronzeLayout.of(table.table_type == "mor", table.buckets, record_index)


def use_record_index(data_bytes: int, has_record_index: bool, threshold_bytes: int) -> bool:
    """Whether a bronze table of `data_bytes` is written with the record-level index.

    Half the threshold keeps a table that has one: a table near the line
    does not build and drop its metadata table on alternate commits.
    """
    return data_bytes >= (threshold_bytes // 2 if has_record_index else threshold_bytes)


def _index_options(table: TableConfig, layout: BronzeLayout) -> dict[str, str]:
    if layout.buckets is not None:
        return {
            **NO_METADATA_TABLE,
            "hoodie.index.type": "BUCKET",
            "hoodie.index.bucket.engine": "SIMPLE",
            "hoodie.bucket.index.num.buckets": str(layout.buckets),
            "hoodie.bucket.index.hash.field": ",".join(table.key),
        }
    if layout.record_index:
        return dict(RECORD_INDEX)
    return {
        **NO_METADATA_TABLE,
        "hoodie.index.type": "GLOBAL_SIMPLE" if table.partition_by else "SIMPLE",
        "hoodie.simple.index.update.partition.path": "true",
    }


def bronze_options(table: TableConfig, parallelism: int, layout: BronzeLayout) -> dict[str, str]:
    """Options of a bronze (current state) table."""
    options = {
        **_key_options(table.name, table.database, table.key, table.partition_by),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": (
            "MERGE_ON_READ" if layout.merge_on_read else "COPY_ON_WRITE"
        ),
        **_event_time_merge(ORDERING_COLUMN[table.ordering]),
        **_index_options(table, layout),
        **NO_BLOOM_FILTERS,
    }
    if layout.merge_on_read:
        options["hoodie.compact.inline"] = "true"
        options["hoodie.compact.inline.max.delta.commits"] = str(OVERDUE_DELTA_COMMITS)
    return options


def changelog_options(table: TableConfig, parallelism: int) -> dict[str, str]:
    """Options of the append-only changelog: one row per event id, duplicates collapse."""
    return {
        **_key_options(table.changelog_name, table.database, ("_cdc_event_id",), ()),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        **_event_time_merge("_cdc_position"),
        "hoodie.parquet.small.file.limit": "0",
        # Append-mostly and read whole: no index to keep in a metadata table.
        **NO_METADATA_TABLE,
        # Every write is a bulk insert, which looks no id up: the stored ids a
        # batch may repeat are read by position (commits.unstored_events).
        "hoodie.index.type": "SIMPLE",
        **NO_BLOOM_FILTERS,
        **clustering_options(),
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": str(OVERDUE_CHANGELOG_COMMITS),
    }


def clustering_options() -> dict[str, str]:
    """How a changelog's small files are clustered: the small ones into bigger, unsorted."""
    return {
        "hoodie.clustering.plan.strategy.small.file.limit": str(CHANGELOG_SMALL_FILE_BYTES),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(
            CHANGELOG_CLUSTERED_FILE_BYTES
        ),
    }


def table_service_options(record_index: bool) -> dict[str, str]:
    """A table service's metadata-table options (compaction, clustering): the table's writes'.

    With Hudi's defaults a service builds a metadata table with column
    statistics, which the table's next write, keeping none, deletes again;
    reads in between list files and skip data through it. Decision 0022.
    """
    return {**RECORD_INDEX, **NO_COLUMN_STATS} if record_index else dict(NO_METADATA_TABLE)


def quarantine_options(database: str, parallelism: int) -> dict[str, str]:
    """Options of the quarantine: one row per (file, line), so reruns overwrite, not add."""
    return {
        **_key_options("_quarantine", database, ("source_file", "line"), ()),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        **NO_METADATA_TABLE,
        "hoodie.index.type": "SIMPLE",
        **NO_BLOOM_FILTERS,
    }


def write(
    frame: DataFrame, path: str, options: dict[str, str], operation: str, new_table: bool
) -> None:
    """One Hudi commit: `operation` is bulk_insert, insert or upsert."""
    (
        frame.write.format("hudi")
        .options(**options)
        .option("hoodie.datasource.write.operation", operation)
        .mode("overwrite" if new_table else "append")
        .save(to_hadoop_uri(path))
    )
