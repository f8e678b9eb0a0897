"""A lake and a landing zone written as files, for the checks that read them without Spark.

A completed Hudi commit is an Avro file in `.hoodie/timeline/` named
`<requested>_<completed>.commit`; only its extra metadata is read
(`ingestion/nothing_new.py`, `lakehouse/status.py`).
"""

from __future__ import annotations

from pathlib import Path

import fastavro

from ingestion.checkpoint import KEY, Checkpoint
from ingestion.hudi_timeline import META_FOLDER, TABLE_PROPERTIES, timeline_folder

COMMIT_SCHEMA = fastavro.parse_schema(
    {
        "type": "record",
        "name": "HoodieCommitMetadata",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [
            {
                "name": "extraMetadata",
                "type": ["null", {"type": "map", "values": ["null", "string"]}],
                "default": None,
            }
        ],
    }
)


def commit(
    table: Path,
    requested: str,
    offsets: dict[int, int] | None,
    topic: str,
    extra: dict[str, str] | None = None,
) -> Path:
    """A completed commit, 5 ms after its request; `offsets` None leaves the checkpoint
    out (a compaction's commit); `extra`: more of its extra metadata."""
    timeline = timeline_folder(table)
    timeline.mkdir(parents=True, exist_ok=True)
    (table / META_FOLDER / TABLE_PROPERTIES).touch()
    metadata = {} if offsets is None else {KEY: Checkpoint(topic, offsets).to_json()}
    path = timeline / f"{requested}_{int(requested) + 5}.commit"
    with path.open("wb") as out:
        fastavro.writer(out, COMMIT_SCHEMA, [{"extraMetadata": {**metadata, **(extra or {})}}])
    return path


def sink_file(landing: Path, topic: str, offset: int, text: str = "{}\n") -> Path:
    """A sink file of partition 0 starting at `offset`, as the S3 sink names them."""
    folder = landing / "topics" / topic / "year=2026" / "month=11" / "day=25"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{topic}+0+{offset:010d}.json"
    path.write_text(text)
    return path
