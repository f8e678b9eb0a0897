"""Exactly-once checkpoints kept in the Hudi commit's extra metadata.

Like DeltaStreamer's `deltastreamer.checkpoint.key`, the offsets consumed are
written in the same atomic commit as the data, so a crash either commits both
or neither; the next run reads the last completed commit's checkpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from ingestion.hudi_timeline import META_FOLDER, TABLE_PROPERTIES
from ingestion.paths import to_hadoop_uri

PREFIX = "lakehouse."
KEY = PREFIX + "checkpoint"


@dataclass(frozen=True)
class Checkpoint:
    """Last consumed start offset per Kafka partition, and the files of that commit."""

    topic: str
    offsets: dict[int, int] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(
            {
                "topic": self.topic,
                "offsets": {str(p): o for p, o in sorted(self.offsets.items())},
                "files": list(self.files),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Checkpoint:
        data = json.loads(text)
        return cls(
            topic=data["topic"],
            offsets={int(p): int(o) for p, o in data.get("offsets", {}).items()},
            files=tuple(data.get("files", [])),
        )


def oldest(checkpoints: list[Checkpoint]) -> dict[int, int]:
    """Per partition, the lowest offset any of the tables committed (-1: not yet read).

    After a crash between the changelog and the bronze commit, the table that
    is behind catches up from here; the other ignores what it already has.
    """
    partitions = {p for checkpoint in checkpoints for p in checkpoint.offsets}
    return {p: min(c.offsets.get(p, -1) for c in checkpoints) for p in sorted(partitions)}


def write_options(checkpoint: Checkpoint) -> dict[str, str]:
    """Hudi write options that put the checkpoint into the commit's extra metadata."""
    return {
        "hoodie.datasource.write.commitmeta.key.prefix": PREFIX,
        KEY: checkpoint.to_json(),
    }


def table_exists(spark: SparkSession, path: str) -> bool:
    """True when a Hudi table is at `path` (its properties file, TABLE_PROPERTIES)."""
    jvm = spark._jvm
    uri = f"{to_hadoop_uri(path).rstrip('/')}/{META_FOLDER}/{TABLE_PROPERTIES}"
    properties = jvm.org.apache.hadoop.fs.Path(uri)
    return bool(properties.getFileSystem(spark._jsc.hadoopConfiguration()).exists(properties))


def read_checkpoint(spark: SparkSession, path: str, topic: str) -> Checkpoint:
    """The checkpoint of the newest completed commit that has one (empty for a new table)."""
    if not table_exists(spark, path):
        return Checkpoint(topic)
    jvm = spark._jvm
    hudi = jvm.org.apache.hudi
    storage = hudi.hadoop.fs.HadoopFSUtils.getStorageConf(spark._jsc.hadoopConfiguration())
    meta = (
        hudi.common.table.HoodieTableMetaClient.builder()
        .setConf(storage)
        .setBasePath(to_hadoop_uri(path))
        .build()
    )
    timeline = meta.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    for instant in reversed(list(timeline.getInstants())):
        metadata = hudi.common.table.timeline.TimelineUtils.getCommitMetadata(instant, timeline)
        text = metadata.getMetadata(KEY)
        if text:
            return Checkpoint.from_json(text)
    return Checkpoint(topic)
