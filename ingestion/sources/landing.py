"""The landing zone: list a topic's files and tell which are new since the checkpoint.

Files are named as the Kafka Connect S3 sink names them,
`<topic>+<partition>+<startOffset>.<ext>`; a file is new when its start offset
is past the last one committed for its partition. A local landing zone is
listed by Python, any other store (s3a://) through Hadoop's FileSystem, both
giving the same paths. Anything else in a topic's folder (other names, empty
files) is skipped with a warning naming the file and why.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from ingestion.checkpoint import Checkpoint
from ingestion.decode.events import read_lines
from ingestion.paths import to_hadoop_uri as to_hadoop_uri  # re-exported: callers import it here
from ingestion.paths import to_local_path
from ingestion.sources.base import SourceBatch

log = logging.getLogger(__name__)

FILE_NAME = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<offset>\d+)\.(?P<ext>json|avro)$")


@dataclass(frozen=True, order=True)
class LandingFile:
    """One sink file; ordered by partition then start offset, the sink's write order."""

    partition: int
    offset: int
    path: str
    format: str  # json or avro, from the extension the sink gives each format


def parse_file_name(path: str, topic: str) -> LandingFile | None:
    """The sink coordinates of a file, or None if it is not one of this topic's files."""
    match = FILE_NAME.match(path.rsplit("/", 1)[-1])
    if not match or match["topic"] != topic:
        return None
    return LandingFile(int(match["partition"]), int(match["offset"]), path, match["ext"])


def list_topic_files(spark: SparkSession, landing: str, topic: str) -> list[LandingFile]:
    """Every sink file of a topic, in write order."""
    local = to_local_path(landing)
    if local is not None:
        statuses = local_statuses(local / "topics" / topic)
    else:
        statuses = hadoop_statuses(spark, landing, topic)
    found, ignored = sort_statuses(statuses, topic)
    for path, reason in ignored:
        log.warning("ignoring %s: %s", path, reason)
    return found


def sort_statuses(
    statuses: list[tuple[str, int]], topic: str
) -> tuple[list[LandingFile], list[tuple[str, str]]]:
    """The topic's sink files in write order, and the files left out with the reason."""
    found: list[LandingFile] = []
    ignored: list[tuple[str, str]] = []
    for path, size in statuses:
        parsed = parse_file_name(path, topic)
        if parsed is None:
            ignored.append((path, f"not a sink file of topic {topic}"))
        elif size == 0:
            # No records; left out of the batch, so it never moves the checkpoint by itself.
            ignored.append((path, "empty file, no records"))
        else:
            found.append(parsed)
    return sorted(found), ignored


def local_statuses(root: Path) -> list[tuple[str, int]]:
    """(path, size) of every file under a local folder, paths as Hadoop's listing writes them.

    Python lists a local landing zone: through py4j, Hadoop's iterator costs
    calls per file, and a continuous run's listing grew with every file landed
    (2.2 s per table and micro-batch at --scale 1 after 5 minutes). The paths
    and the files left out are Hadoop's (`file:` paths, its checksum files
    hidden), so checkpoints, `_cdc_source_file` and quarantine keys stay the same.
    """
    found = []
    for folder, _, names in os.walk(root, followlinks=True):
        for name in names:
            if name.startswith(".") and name.endswith(".crc"):
                continue  # ChecksumFileSystem's own files, which it never lists
            path = os.path.join(os.path.abspath(folder), name)
            found.append(("file:" + path, os.stat(path).st_size))
    return found


def hadoop_statuses(spark: SparkSession, landing: str, topic: str) -> list[tuple[str, int]]:
    """(path, size) of every file of a topic's folder on any Hadoop store (s3a://...)."""
    jvm = spark._jvm
    root = jvm.org.apache.hadoop.fs.Path(f"{to_hadoop_uri(landing).rstrip('/')}/topics/{topic}")
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    if not fs.exists(root):
        return []
    found = []
    files = fs.listFiles(root, True)
    while files.hasNext():
        status = files.next()
        found.append((status.getPath().toString(), status.getLen()))
    return found


def new_files(files: list[LandingFile], committed: dict[int, int]) -> list[LandingFile]:
    """Files whose start offset is past the last committed one of their partition."""
    return [f for f in files if f.offset > committed.get(f.partition, -1)]


def advance(committed: dict[int, int], consumed: list[LandingFile]) -> dict[int, int]:
    """The checkpoint after consuming `consumed`: last start offset per partition."""
    offsets = dict(committed)
    for landing_file in consumed:
        offsets[landing_file.partition] = max(
            offsets.get(landing_file.partition, -1), landing_file.offset
        )
    return offsets


def plan_files(
    topic: str, listed: list[LandingFile], committed: Mapping[int, int]
) -> SourceBatch[LandingFile]:
    """The new files of a listing and the checkpoint after them (pure).

    Only the partitions the listing has are carried into the checkpoint.
    """
    behind = {p: committed.get(p, -1) for p in {f.partition for f in listed}}
    files = new_files(listed, behind)
    checkpoint = Checkpoint(topic, advance(behind, files), tuple(f.path for f in files))
    return SourceBatch(tuple(files), checkpoint)


class LandingSource:
    """The `Source` of a topic's sink files in the landing zone."""

    def __init__(self, spark: SparkSession, landing: str, topic: str) -> None:
        self.spark = spark
        self.landing = landing
        self.topic = topic

    def pending(self, committed: Mapping[int, int]) -> SourceBatch[LandingFile]:
        listed = list_topic_files(self.spark, self.landing, self.topic)
        return plan_files(self.topic, listed, committed)

    def read(self, batch: SourceBatch[LandingFile]) -> DataFrame:
        return read_lines(
            self.spark,
            [f.path for f in batch.items if f.format == "json"],
            [f.path for f in batch.items if f.format == "avro"],
        )
