"""What a run will find, told without starting Spark: nothing new, or how much.

A one-shot `lakehouse ingest` (the hourly job's first step) that finds nothing
new spent most of its 6 to 7 s starting a JVM to learn it; one that finds a
small batch starts its JVM for a small batch (`spark.for_batch`). This reads what the
engine's plan reads (plan.py), the same way, in Python: each table's and its
changelog's checkpoint from the newest completed Hudi commit that holds one
(the commit's Avro file in `.hoodie/timeline/`, as `table_state.read_state`
walks them), and the topic's sink files (`landing.plan_files` on a local
listing). It answers only when it is sure: anything it cannot read as the
engine would (a remote lake or landing, a Kafka source, a file the engine
would warn about, a commit file it cannot parse, commits without a checkpoint)
sends the run down the ordinary path. It takes no lock and writes nothing; a
commit landing meanwhile leaves either the old state with new files (not
nothing new) or the new state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import fastavro

from ingestion.checkpoint import KEY, Checkpoint, oldest
from ingestion.config import TableConfig
from ingestion.hudi_timeline import COMPLETED, timeline_files, timeline_folder
from ingestion.paths import TablePaths, to_local_path
from ingestion.profile import StepTiming
from ingestion.results import IngestRun, TableResult, ingestion_time
from ingestion.settings import Settings
from ingestion.sources.landing import LandingFile, local_statuses, plan_files, sort_statuses
from ingestion.spark import for_batch

STEP = "nothing-new check"


class Unsure(Exception):
    """Something is not readable the way the engine reads it: take the ordinary path."""


def local_path(uri: str) -> Path:
    """The local folder of `uri`; other stores (s3a://...) are the engine's to read."""
    if (path := to_local_path(uri)) is None:
        raise Unsure(uri)
    return path


def _extra_metadata(commit: Path) -> dict[str, str]:
    """The commit's extra metadata (HoodieCommitMetadata, an Avro file in Hudi 1.x)."""
    try:
        with commit.open("rb") as avro:
            records = list(fastavro.reader(avro))
    except Exception as error:  # any unreadable file (torn, another format) means unsure
        raise Unsure(f"{commit}: {error}") from error
    if len(records) != 1:
        raise Unsure(f"{commit}: {len(records)} records")
    return records[0].get("extraMetadata") or {}


@dataclass(frozen=True)
class Committed:
    """A table's newest completed commit that holds a checkpoint, read as read_state reads it."""

    metadata: dict[str, str]  # that commit's extra metadata; {} with no commit
    completed_at: str | None = None  # the newest completed commit's completion time (Hudi's)

    def checkpoint(self, topic: str) -> Checkpoint:
        """Its checkpoint; an empty one with no commit."""
        text = self.metadata.get(KEY)
        return Checkpoint.from_json(text) if text else Checkpoint(topic)


def committed(path: str) -> Committed:
    """The newest completed commit holding a checkpoint; nothing with no table or commit."""
    timeline = timeline_folder(local_path(path))
    names = timeline_files(None, path)
    if names is None:
        return Committed({})
    completed = sorted((m["t"], m["done"], name) for name in names if (m := COMPLETED.match(name)))
    newest = max((done for _, done, _ in completed), default=None)
    for _, _, name in reversed(completed):
        if (metadata := _extra_metadata(timeline / name)).get(KEY):
            return Committed(metadata, newest)
    if completed:  # the engine would walk the same commits; leave the odd case to it
        raise Unsure(f"{path}: no completed commit holds a checkpoint")
    return Committed({})


def committed_checkpoint(path: str, topic: str) -> Checkpoint:
    """What read_state finds: the newest completed commit's checkpoint; empty with no table."""
    return committed(path).checkpoint(topic)


def topic_files(landing: str, topic: str) -> tuple[list[LandingFile], dict[str, int]]:
    """The topic's sink files, as `list_topic_files` lists them, and their sizes by path;
    unsure at any odd file."""
    statuses = local_statuses(local_path(landing) / "topics" / topic)
    found, ignored = sort_statuses(statuses, topic)
    if ignored:
        raise Unsure(f"{ignored[0][0]}: {ignored[0][1]}")  # the engine warns about it, each run
    return found, dict(statuses)


@dataclass(frozen=True)
class TableLook:
    """One table's new sink files, as the engine's plan will find them."""

    table: str
    files: int
    bytes: int
    seconds: float


@dataclass(frozen=True)
class LookAhead:
    """Every selected table's new sink files, read before any JVM starts."""

    ingested_at: str
    seconds: float
    tables: tuple[TableLook, ...]

    @property
    def new_bytes(self) -> int:
        return sum(look.bytes for look in self.tables)

    def nothing_new_run(self, conf: Settings) -> IngestRun | None:
        """The run's record when no table has anything new, else None."""
        if any(look.files for look in self.tables):
            return None
        results = tuple(
            TableResult(look.table, seconds=look.seconds, profile=(StepTiming(STEP, look.seconds),))
            for look in self.tables
        )
        steps = (StepTiming(STEP, self.seconds),)
        return IngestRun(self.ingested_at, self.seconds, conf.landing, conf.lake, results, steps)


def _look_at(conf: Settings, table: TableConfig) -> TableLook:
    started = time.monotonic()
    paths = TablePaths.of(conf, table)
    committed = oldest(
        [
            committed_checkpoint(paths.bronze, table.topic),
            committed_checkpoint(paths.changelog, table.topic),
        ]
    )
    listed, sizes = topic_files(conf.landing, table.topic)
    new = plan_files(table.topic, listed, committed).items
    size = sum(sizes[f.path] for f in new)
    return TableLook(table.name, len(new), size, round(time.monotonic() - started, 3))


def look_ahead(conf: Settings, tables: list[TableConfig]) -> LookAhead | None:
    """What each table's plan will find; None when unsure (see the module's docstring)."""
    if any(table.source.kind != "landing" for table in tables):
        return None
    ingested_at = ingestion_time()
    started = time.monotonic()
    try:
        looks = tuple(_look_at(conf, table) for table in tables)
    except (Unsure, OSError):  # OSError: a file gone or unreadable while looked at
        return None
    return LookAhead(ingested_at, round(time.monotonic() - started, 3), looks)


def nothing_new(conf: Settings, tables: list[TableConfig]) -> IngestRun | None:
    """The run's record when no table has anything new; None when one has, or when unsure."""
    look = look_ahead(conf, tables)
    return None if look is None else look.nothing_new_run(conf)


def batch_settings(conf: Settings, look: LookAhead | None) -> Settings:
    """The one-shot driver's settings for the batch the look found (`for_batch`)."""
    return for_batch(conf, look.new_bytes if look else None)
