"""What a run must know of a Hudi table before it writes: exists, checkpoint, columns, layout.

All come from the table's newest commits in one pass (one listing of the
timeline, one Hudi meta client, no Spark job): the checkpoint from the commit
metadata (checkpoint.py), the columns from the schema Hudi writes into the
same metadata, the table type from its properties, and the bucket count and a
changelog's last source position from the commits (Hudi keeps neither). The
newest completed instant is the state's version: a caller that kept a state
(the continuous service between micro-batches) lists the timeline and reuses
what it has when nobody committed since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from ingestion.checkpoint import KEY, PREFIX, Checkpoint
from ingestion.hudi_timeline import META_FOLDER, newest_completed, timeline_files
from ingestion.paths import to_hadoop_uri

SCHEMA_KEY = "schema"  # HoodieCommitMetadata.SCHEMA_KEY: the writer's Avro schema
# A bucket-indexed bronze table's bucket count, in each of its commits: Hudi
# takes it from the writer's options only, and a write with another count
# would put a key's new version in another file group than its old one.
BUCKETS_KEY = PREFIX + "buckets"
# The highest source position (ordering.py) of every event a changelog holds:
# a batch whose events all sort after it holds no event the changelog has.
LAST_POSITION_KEY = PREFIX + "last_position"
# The newest source commit time (epoch ms) of any event a bronze table holds:
# what `lakehouse status` calls "data as of", read without Spark.
NEWEST_SOURCE_KEY = PREFIX + "newest_source_ms"


@dataclass(frozen=True)
class TableState:
    """A Hudi table as of its newest completed commit (`instant`, None when absent)."""

    exists: bool
    checkpoint: Checkpoint
    schema: T.StructType | None = None
    instant: str | None = None
    data_bytes: int = 0  # base and log files, the metadata folder left out
    record_index: bool = False  # the metadata table holds a record-level index
    merge_on_read: bool = False
    buckets: int | None = None  # the bucket index's bucket count, when it has one
    last_position: str | None = None  # LAST_POSITION_KEY, when its commits record it
    newest_source_ms: int | None = None  # NEWEST_SOURCE_KEY, when its commits record it


def _meta_client(spark: SparkSession, path: str) -> Any:
    hudi = spark._jvm.org.apache.hudi
    storage = hudi.hadoop.fs.HadoopFSUtils.getStorageConf(spark._jsc.hadoopConfiguration())
    return (
        hudi.common.table.HoodieTableMetaClient.builder()
        .setConf(storage)
        .setBasePath(to_hadoop_uri(path))
        .build()
    )


def has_record_index(spark: SparkSession, path: str) -> bool:
    """Whether the table's metadata table holds a record-level index."""
    return _record_index(_meta_client(spark, path).getTableConfig())


def _record_index(config: Any) -> bool:
    return "record_index" in set(config.getMetadataPartitions())


def _spark_schema(spark: SparkSession, avro_json: str) -> T.StructType:
    """The commit's writer schema (Avro JSON) as Spark columns, converted by Hudi itself."""
    hudi = spark._jvm.org.apache.hudi
    schema = hudi.common.schema.HoodieSchema.parse(avro_json)
    struct = hudi.HoodieSchemaConversionUtils.convertHoodieSchemaToStructType(schema)
    return T.StructType.fromJson(json.loads(struct.json()))


def _data_bytes(spark: SparkSession, path: str) -> int:
    """Bytes of the table's data: its folder's content less Hudi's META_FOLDER."""
    jvm = spark._jvm
    base = jvm.org.apache.hadoop.fs.Path(to_hadoop_uri(path))
    fs = base.getFileSystem(spark._jsc.hadoopConfiguration())
    meta = jvm.org.apache.hadoop.fs.Path(base, META_FOLDER)
    return int(fs.getContentSummary(base).getLength() - fs.getContentSummary(meta).getLength())


def _from_commits(
    spark: SparkSession, path: str, topic: str, instant: str | None, details: bool
) -> TableState:
    """Walk the completed commits newest first until the checkpoint (and schema) are found.

    `details`: also the columns, the size and the index, which only a table
    that is merged into (bronze) needs.
    """
    hudi = spark._jvm.org.apache.hudi
    client = _meta_client(spark, path)
    timeline = client.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    checkpoint: Checkpoint | None = None
    schema: T.StructType | None = None
    buckets: int | None = None
    last_position: str | None = None
    newest_source_ms: str | None = None
    for commit in reversed(list(timeline.getInstants())):
        metadata = hudi.common.table.timeline.TimelineUtils.getCommitMetadata(commit, timeline)
        if checkpoint is None and (text := metadata.getMetadata(KEY)):
            checkpoint = Checkpoint.from_json(text)
            buckets = int(count) if (count := metadata.getMetadata(BUCKETS_KEY)) else None
            last_position = metadata.getMetadata(LAST_POSITION_KEY) or None
            newest_source_ms = metadata.getMetadata(NEWEST_SOURCE_KEY) or None
        if details and schema is None and (avro := metadata.getMetadata(SCHEMA_KEY)):
            schema = _spark_schema(spark, avro)
        if checkpoint is not None and (schema is not None or not details):
            break
    state = TableState(
        True,
        checkpoint or Checkpoint(topic),
        schema,
        instant,
        last_position=last_position,
        newest_source_ms=int(newest_source_ms) if newest_source_ms else None,
    )
    if not details:
        return state
    config = client.getTableConfig()
    return replace(
        state,
        data_bytes=_data_bytes(spark, path),
        record_index=_record_index(config),
        merge_on_read=config.getTableType().name() == "MERGE_ON_READ",
        buckets=buckets,
    )


def read_state(
    spark: SparkSession,
    path: str,
    topic: str,
    known: TableState | None = None,
    details: bool = True,
) -> TableState:
    """The table's state; `known` is returned as is when no commit completed since it."""
    files = timeline_files(spark, path)
    if files is None:
        return TableState(False, Checkpoint(topic))
    instant = newest_completed(files)
    if known is not None and known.exists and known.instant == instant:
        return known
    return _from_commits(spark, path, topic, instant, details)
