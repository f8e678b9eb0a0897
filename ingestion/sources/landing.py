"""The landing zone: list a topic's files and tell which are new since the checkpoint.

Files are named as the Kafka Connect S3 sink names them,
`<topic>+<partition>+<startOffset>.<ext>`; a file is new when its start offset
is past the last one committed for its partition. Listing goes through
Hadoop's FileSystem, so local folders and s3a:// behave the same.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

FILE_NAME = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<offset>\d+)\.(?P<ext>json|avro)$")


@dataclass(frozen=True, order=True)
class LandingFile:
    """One sink file; ordered by partition then start offset, the sink's write order."""

    partition: int
    offset: int
    path: str
    format: str  # json or avro, from the extension the sink gives each format


def to_hadoop_uri(uri: str) -> str:
    """s3:// (boto3, users) -> s3a:// (Hadoop); local paths -> file: URIs."""
    if uri.startswith("s3://"):
        return "s3a://" + uri[len("s3://") :]
    if "://" in uri or uri.startswith("file:"):
        return uri
    return "file://" + uri


def parse_file_name(path: str, topic: str) -> LandingFile | None:
    """The sink coordinates of a file, or None if it is not one of this topic's files."""
    match = FILE_NAME.match(path.rsplit("/", 1)[-1])
    if not match or match["topic"] != topic:
        return None
    return LandingFile(int(match["partition"]), int(match["offset"]), path, match["ext"])


def list_topic_files(spark: SparkSession, landing: str, topic: str) -> list[LandingFile]:
    """Every sink file of a topic, in write order."""
    jvm = spark._jvm
    root = jvm.org.apache.hadoop.fs.Path(f"{to_hadoop_uri(landing).rstrip('/')}/topics/{topic}")
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    if not fs.exists(root):
        return []
    found: list[LandingFile] = []
    files = fs.listFiles(root, True)
    while files.hasNext():
        path = files.next().getPath().toString()
        parsed = parse_file_name(path, topic)
        if parsed is None:
            log.warning("ignoring %s: not a sink file of topic %s", path, topic)
            continue
        found.append(parsed)
    return sorted(found)


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
