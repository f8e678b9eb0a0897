"""The latency benchmark's writer side: generated change batches landed as a sink flushes them.

The generator's change files are cut into small files, one per topic
partition per flush (every second, `rate` records in all), named by their
first record's Kafka offset exactly as the S3 sink names them; each record
keeps the offset it had in the generated file, so the checkpoints and the
expected final state are the generator's. A file is written under a temporary
name and renamed into place: a poll never sees half of it.

Each flush offers one sampled change (a keyed event, not a tombstone or a
truncate) to the prober: its table, key, and the start offset of its file.
"""

from __future__ import annotations

import heapq
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ingestion.sources.landing import parse_file_name
from lakehouse.bench.staging import Landing


@dataclass(frozen=True)
class Record:
    """One landing line with its coordinates."""

    topic: str
    partition: int
    offset: int
    folder: str  # the sink's day folder, relative to the landing root
    line: str


@dataclass(frozen=True)
class Sample:
    """A change the prober waits for: visible once its key's row comes from this file or later."""

    table: str
    key_column: str
    key: object
    topic: str
    file_offset: int
    landed_at: float


def _topic_records(landing: Landing, topic: str, batch: int) -> list[Record]:
    records = []
    for relative in landing.files(batch)[topic]:
        parsed = parse_file_name(relative, topic)
        if parsed is None:
            continue
        folder = relative.rsplit("/", 1)[0]
        with (landing.root / relative).open() as lines:
            for index, line in enumerate(lines):
                records.append(
                    Record(
                        topic, parsed.partition, parsed.offset + index, folder, line.rstrip("\n")
                    )
                )
    return records


def change_stream(landing: Landing) -> Iterator[Record]:
    """Every change record after the snapshot, topics interleaved in proportion, each in order."""
    for batch in range(1, landing.batches):
        per_topic = [_topic_records(landing, topic, batch) for topic in landing.topics()]
        queue = [(0.0, index, 0) for index, records in enumerate(per_topic) if records]
        heapq.heapify(queue)
        while queue:
            _, index, position = heapq.heappop(queue)
            records = per_topic[index]
            yield records[position]
            if position + 1 < len(records):
                heapq.heappush(queue, ((position + 1) / len(records), index, position + 1))


def sample_of(
    record: Record, table: str, key: tuple[str, ...], file_offset: int, landed_at: float
) -> Sample | None:
    """The record as a sample, or None when it has no single key value (tombstone, truncate)."""
    if len(key) != 1:
        return None
    try:
        data = json.loads(record.line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    payload = data.get("payload", data) if "schema" in data else data
    if not isinstance(payload, dict) or payload.get("op") == "t":
        return None
    image = payload.get("after") or payload.get("before") if "op" in payload else payload
    if not isinstance(image, dict) or image.get(key[0]) is None:
        return None
    return Sample(table, key[0], image[key[0]], record.topic, file_offset, landed_at)


class SinkWriter:
    """Lands records as sink files: one file per topic partition per flush."""

    def __init__(self, root: Path, seed: int = 42) -> None:
        self.root = root
        self.staging = root / "_incoming"
        self.staging.mkdir(parents=True, exist_ok=True)
        self.random = random.Random(seed)

    def flush(self, records: list[Record]) -> dict[tuple[str, int], int]:
        """Write the records; return each topic partition's file start offset."""
        groups: dict[tuple[str, int], list[Record]] = {}
        for record in records:
            groups.setdefault((record.topic, record.partition), []).append(record)
        starts = {}
        for (topic, partition), group in groups.items():
            first = group[0]
            name = f"{topic}+{partition}+{first.offset:010d}.json"
            target = self.root / first.folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = self.staging / name
            partial.write_text("".join(r.line + "\n" for r in group))
            os.replace(partial, target)
            starts[(topic, partition)] = first.offset
        return starts

    def pick(self, records: list[Record]) -> Record | None:
        return self.random.choice(records) if records else None
