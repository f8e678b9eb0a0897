"""`generate(options)`: the whole run, from TICKIT rows to landing files and manifest.

The plain-function API the CLI, the generator's tests and the ingestion tests
call: populate the sources, write the snapshot, write each change batch,
then the expected final states and the manifest.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from lakehouse.cdc.generate.expected import checksum, expected_file, expected_rows
from lakehouse.cdc.generate.formats import make_format
from lakehouse.cdc.generate.manifest import (
    MANIFEST_PATH,
    build_manifest,
    expected_path,
    manifest_bytes,
)
from lakehouse.cdc.generate.options import GenerateOptions
from lakehouse.cdc.generate.population import populate
from lakehouse.cdc.generate.sink import LandedFile, PartitionWriter, Storage, open_storage
from lakehouse.cdc.generate.stream import StreamBuilder, Unit
from lakehouse.cdc.generate.tickit import TABLES

log = logging.getLogger(__name__)
_PROGRESS_EVERY = 2_000


class Progress(Protocol):
    """Where the generator reports progress (the CLI shows a rich bar)."""

    def start(self, description: str, total: int) -> None: ...

    def advance(self, count: int) -> None: ...


class _Silent:
    def start(self, description: str, total: int) -> None:
        pass

    def advance(self, count: int) -> None:
        pass


@dataclass
class TopicSummary:
    """What one topic received: records (tombstones included), files, bytes, time."""

    topic: str
    table: str
    records: int = 0
    tombstones: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0


@dataclass
class GenerateSummary:
    """The result of a run, for the CLI's summary and for tests."""

    out: str
    format: str
    seconds: float
    topics: list[TopicSummary] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    files: list[LandedFile] = field(default_factory=list)

    @property
    def records(self) -> int:
        return sum(topic.records for topic in self.topics)

    @property
    def bytes(self) -> int:
        return sum(topic.bytes for topic in self.topics)

    @property
    def file_count(self) -> int:
        return sum(topic.files for topic in self.topics)


class _Run:
    """One generation: the writers, the clocks and the per-topic timing."""

    def __init__(self, options: GenerateOptions, storage: Storage, progress: Progress) -> None:
        self.options = options
        self.storage = storage
        self.progress = progress
        self.fmt = make_format(
            options.format, options.decimal_handling_mode, options.avro_sync_interval
        )
        self.writers = {
            table.topic: [
                PartitionWriter(table.topic, p, self.fmt, storage, options.flush_size, options.seed)
                for p in range(options.partitions)
            ]
            for table in TABLES.values()
        }
        self.seconds: dict[str, float] = defaultdict(float)
        self._pending = 0

    def write(self, topic: str, units: Iterable[Unit], batch: int) -> None:
        """Write a topic's units for a batch and commit its open files (the day ends)."""
        started = time.perf_counter()
        day = self.options.snapshot_day + timedelta(days=batch)
        writers = self.writers[topic]
        for unit in units:
            writers[unit.partition].write(unit, batch, day)
            self._pending += 1
            if self._pending >= _PROGRESS_EVERY:
                self.progress.advance(self._pending)
                self._pending = 0
        for writer in writers:
            writer.commit()
        self.seconds[topic] += time.perf_counter() - started

    def flush_progress(self) -> None:
        self.progress.advance(self._pending)
        self._pending = 0


def generate(options: GenerateOptions, progress: Progress | None = None) -> GenerateSummary:
    """Generate the landing zone described by `options`; return what was written."""
    started = time.perf_counter()
    progress = progress or _Silent()
    storage = open_storage(options.out)
    run = _Run(options, storage, progress)
    db = populate(options.seed, options.scale)
    stream = StreamBuilder(options, db)

    progress.start("snapshot", sum(db.live_count(table) for table in TABLES.values()))
    for table in TABLES.values():
        run.write(table.topic, stream.snapshot(table), 0)
    run.flush_progress()
    for number in range(1, options.change_batches + 1):
        batch = stream.change_batch(number)
        progress.start(f"change batch {number}", sum(len(u) for u in batch.units.values()))
        for topic, units in batch.units.items():
            run.write(topic, units, number)
        run.flush_progress()
        log.info("change batch %d: %s", number, {t: len(u) for t, u in batch.units.items()})

    expected = {}
    for table in TABLES.values():
        rows = expected_rows(db, table)
        data = expected_file(rows)
        storage.put(expected_path(table.name), data)
        expected[table.name] = {
            "rows": len(rows),
            "deleted": sum(1 for row in rows if row["_deleted"]),
            "checksum": checksum(data),
        }
    files = {topic: [f for w in writers for f in w.files] for topic, writers in run.writers.items()}
    manifest = build_manifest(options, files, expected)
    storage.put(MANIFEST_PATH, manifest_bytes(manifest))
    return GenerateSummary(
        out=options.out,
        format=options.format,
        seconds=time.perf_counter() - started,
        topics=[
            _topic_summary(table.topic, table.name, files[table.topic], run)
            for table in TABLES.values()
        ],
        manifest=manifest,
        files=[f for topic_files in files.values() for f in topic_files],
    )


def _topic_summary(topic: str, table: str, files: list[LandedFile], run: _Run) -> TopicSummary:
    return TopicSummary(
        topic=topic,
        table=table,
        records=sum(f.records for f in files),
        tombstones=sum(f.ops["tombstone"] for f in files),
        files=len(files),
        bytes=sum(f.size for f in files),
        seconds=run.seconds[topic],
    )
