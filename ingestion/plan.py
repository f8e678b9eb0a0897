"""Step 1 of a table's run: what to read, from the tables' states and the source.

The plan is everything decided before reading any data: where the table's
three Hudi tables are, their states (exists, checkpoint, columns: one pass
over each timeline, table_state.py), the source's new items and the
checkpoint that will be committed with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from ingestion.checkpoint import Checkpoint, oldest
from ingestion.config import Source as SourceSystem
from ingestion.config import TableConfig
from ingestion.errors import UserError
from ingestion.paths import TablePaths
from ingestion.profile import Profiler
from ingestion.resnapshot_journal import replaced
from ingestion.settings import Settings
from ingestion.sources.base import Source, SourceBatch
from ingestion.sources.kafka import KafkaSource
from ingestion.sources.landing import LandingSource
from ingestion.sources.snapshot import SnapshotFiles
from ingestion.table_state import TableState, read_state


@dataclass
class TableMemory:
    """What the engine keeps of a table between micro-batches of one process.

    The states are reused only while their table's newest commit is unchanged
    (read_state checks with one listing); `registered` spares the catalog;
    `seconds` orders the next micro-batch (engine.longest_first).
    """

    bronze: TableState | None = None
    changelog: TableState | None = None
    registered: bool = False
    seconds: float = 0.0  # the table's run in the last micro-batch


@dataclass(frozen=True)
class TablePlan:
    """One table's run, decided: targets, their states, and the batch to apply."""

    table: TableConfig
    paths: TablePaths
    batch: SourceBatch[Any]
    bronze: TableState
    changelog: TableState
    memory: TableMemory = field(default_factory=TableMemory)

    @property
    def files(self) -> int:
        return len(self.batch.items)

    @property
    def bronze_exists(self) -> bool:
        return self.bronze.exists

    @property
    def changelog_exists(self) -> bool:
        return self.changelog.exists


def source_for(spark: SparkSession, conf: Settings, table: TableConfig) -> Source[Any]:
    """The table's source, by its source system's kind (conf/tables.yml, source_kinds)."""
    if table.source.kind == "kafka":
        return kafka_source(spark, conf, table.topic, table.source)
    return LandingSource(spark, conf.landing, table.topic)


def kafka_source(
    spark: SparkSession, conf: Settings, topic: str, source: SourceSystem
) -> KafkaSource:
    """A topic of the source system, read as its connector writes it (JSON or Avro)."""
    registry = conf.registry_url if source.kafka_format == "avro" else None
    return KafkaSource(spark, conf.kafka_servers, topic, conf.kafka_options, registry)


def _committed(
    conf: Settings, table: TableConfig, memory: TableMemory, source: Source[Any]
) -> list[Checkpoint]:
    """Both tables' checkpoints; for a table being rebuilt from a snapshot that has no
    commit yet, the replaced table's (resnapshot_journal.py). A rebuild from landing
    files commits the user's snapshot files first: any other source is refused."""
    states = [memory.bronze, memory.changelog]
    if all(state is not None and state.exists for state in states):
        return [state.checkpoint for state in states if state is not None]
    record = replaced(conf, table)
    if record is None:
        return [state.checkpoint for state in states if state is not None]
    if record.snapshot_folder and not isinstance(source, SnapshotFiles):
        raise UserError(
            f"{table.name}: its rebuild from {record.snapshot_folder} was interrupted: run "
            f"`lakehouse resnapshot {table.name} --from {record.snapshot_folder}` to finish it"
        )
    return [
        state.checkpoint if state is not None and state.exists else record.checkpoint
        for state in states
    ]


def plan_table(
    spark: SparkSession,
    conf: Settings,
    table: TableConfig,
    source: Source[Any],
    profile: Profiler,
    memory: TableMemory | None = None,
) -> TablePlan:
    """Read both tables' states and ask the source what is new past the older checkpoint."""
    memory = memory if memory is not None else TableMemory()
    paths = TablePaths.of(conf, table)
    with profile.step("checkpoint read"):
        memory.bronze = read_state(spark, paths.bronze, table.topic, memory.bronze)
        memory.changelog = read_state(
            spark, paths.changelog, table.topic, memory.changelog, details=False
        )
    with profile.step("listing") as detail:
        batch = source.pending(oldest(_committed(conf, table, memory, source)))
        detail["items"] = len(batch.items)
    return TablePlan(table, paths, batch, memory.bronze, memory.changelog, memory)
