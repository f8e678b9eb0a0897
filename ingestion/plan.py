"""Step 1 of a table's run: what to read, from the checkpoints and the source.

The plan is everything decided before reading any data: where the table's
three Hudi tables are, whether they exist yet, the source's new items and the
checkpoint that will be committed with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from ingestion.checkpoint import oldest, read_checkpoint, table_exists
from ingestion.config import TableConfig
from ingestion.paths import TablePaths
from ingestion.settings import Settings
from ingestion.sources.base import Source, SourceBatch
from ingestion.sources.kafka import KafkaSource
from ingestion.sources.landing import LandingSource


@dataclass(frozen=True)
class TablePlan:
    """One table's run, decided: targets, whether they exist, and the batch to apply."""

    table: TableConfig
    paths: TablePaths
    batch: SourceBatch[Any]
    bronze_exists: bool
    changelog_exists: bool

    @property
    def files(self) -> int:
        return len(self.batch.items)


def source_for(spark: SparkSession, conf: Settings, table: TableConfig) -> Source[Any]:
    """The table's source, by its source system's kind (conf/tables.yml, source_kinds)."""
    if table.source.kind == "kafka":
        return KafkaSource(spark, conf.kafka_servers, table.topic, conf.kafka_options)
    return LandingSource(spark, conf.landing, table.topic)


def plan_table(
    spark: SparkSession, conf: Settings, table: TableConfig, source: Source[Any]
) -> TablePlan:
    """Read both checkpoints and ask the source what is new past the older one."""
    paths = TablePaths.of(conf, table)
    checkpoints = [
        read_checkpoint(spark, paths.bronze, table.topic),
        read_checkpoint(spark, paths.changelog, table.topic),
    ]
    return TablePlan(
        table=table,
        paths=paths,
        batch=source.pending(oldest(checkpoints)),
        bronze_exists=table_exists(spark, paths.bronze),
        changelog_exists=table_exists(spark, paths.changelog),
    )
