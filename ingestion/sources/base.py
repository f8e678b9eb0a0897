"""What the engine asks of a source of change records, whatever it is.

Today the only source is the landing zone (files the Kafka Connect S3 sink
wrote); reading Kafka itself is next. Both hand the engine the same two
things, so the engine never knows which it has: a batch of what is new since
the committed offsets, with the checkpoint to commit alongside the data it
becomes, and the batch read as landing lines (the decoder's input shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pyspark.sql import DataFrame

from ingestion.checkpoint import Checkpoint

Item = TypeVar("Item")


@dataclass(frozen=True)
class SourceBatch(Generic[Item]):
    """What to read next: the source's units (files, offset ranges) and what to commit."""

    items: tuple[Item, ...]
    checkpoint: Checkpoint  # committed with the data of `items`, in the same Hudi commit

    @property
    def empty(self) -> bool:
        return not self.items


class Source(Protocol[Item]):
    """A topic's change records: what is pending past a checkpoint, and reading it."""

    topic: str

    def pending(self, committed: Mapping[int, int]) -> SourceBatch[Item]:
        """Everything past `committed` (last consumed offset per partition)."""
        ...

    def read(self, batch: SourceBatch[Item]) -> DataFrame:
        """The batch as lines: (file, line, raw, schema, error), see `decode.events`."""
        ...
