"""The `Source` of a rebuild from landing files: a fresh snapshot's sink files, given by the user.

`lakehouse resnapshot` (lakehouse/resnapshot.py) commits them as a rebuilt
table's first batch, with the replaced table's checkpoint: the snapshot's own
file offsets mean nothing to the topic the table then reads on.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from ingestion.checkpoint import Checkpoint
from ingestion.errors import UserError
from ingestion.sources.base import SourceBatch
from ingestion.sources.landing import LandingFile, LandingSource


class SnapshotFiles:
    """The snapshot's sink files as one batch, committed with the replaced tables'
    checkpoint: the snapshot's own file offsets mean nothing to the topic read on."""

    def __init__(self, spark: SparkSession, folder: str, topic: str, carried: Checkpoint) -> None:
        self.files = LandingSource(spark, folder, topic)
        self.folder = folder
        self.topic = topic
        self.carried = carried

    def pending(self, committed: Mapping[int, int]) -> SourceBatch[LandingFile]:
        batch = self.files.pending({})
        if batch.empty:
            raise UserError(
                f"{self.folder}: no sink files of topic {self.topic}: put the fresh snapshot's "
                f"files under {self.folder.rstrip('/')}/topics/{self.topic}/"
            )
        return SourceBatch(
            batch.items, Checkpoint(self.topic, dict(self.carried.offsets), batch.checkpoint.files)
        )

    def read(self, batch: SourceBatch[LandingFile]) -> DataFrame:
        return self.files.read(batch)
