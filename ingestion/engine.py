"""One ingestion run: for each table, new landing files -> quarantine, changelog, bronze.

Order matters for exactly-once: rejects first (keyed by file and line, so a
rerun overwrites them), then the changelog and the bronze table, each commit
carrying the checkpoint of the files it applied. A crash between commits makes
the next run re-read from the older checkpoint; Hudi's keys and ordering make
re-applying those events a no-op.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ingestion import catalog, hudi_writer
from ingestion.checkpoint import Checkpoint, read_checkpoint, table_exists, write_options
from ingestion.config import TableConfig
from ingestion.decode.events import CDC_COLUMNS, DecodeSpec, classify, decode, read_lines
from ingestion.decode.types import FieldType, from_spark_type
from ingestion.settings import Settings
from ingestion.sources.landing import advance, list_topic_files, new_files, to_hadoop_uri

QUARANTINE = "_quarantine"
QUARANTINE_LOCK = threading.Lock()


@dataclass
class TableResult:
    """What one table's run did; printed as the summary and kept in the run record."""

    table: str
    files: int = 0
    events: dict[str, int] = field(default_factory=dict)
    tombstones: int = 0
    upserted: int = 0
    deleted: int = 0
    quarantined: int = 0
    seconds: float = 0.0
    committed: bool = False

    @property
    def events_per_second(self) -> float:
        total = sum(self.events.values())
        return round(total / self.seconds, 1) if self.seconds else 0.0


def table_path(conf: Settings, database: str, table: str) -> str:
    return f"{conf.lake.rstrip('/')}/{database}/{table}"


def _existing_columns(spark: SparkSession, path: str) -> dict[str, FieldType]:
    """Source columns the bronze table already has (including ones added by evolution)."""
    if not table_exists(spark, path):
        return {}
    schema = spark.read.format("hudi").load(to_hadoop_uri(path)).schema
    columns: dict[str, FieldType] = {}
    for column in schema.fields:
        if column.name.startswith(("_hoodie", "_cdc_")):
            continue
        columns[column.name] = from_spark_type(column.dataType.simpleString())
    return columns


def _truncate_deletes(
    spark: SparkSession, table: TableConfig, path: str, events: DataFrame, columns: list[str]
) -> DataFrame | None:
    """Delete rows for every key a truncate wiped out, at the truncate's position.

    Each gets the latest image it had before the truncate; rows re-inserted after
    it carry a higher position, so Hudi's ordering keeps them.
    """
    if table.truncate == "ignore":
        return None
    truncates = (
        events.where("_cdc_op = 't'")
        .select("_cdc_position", "_cdc_source_ts", "_cdc_source_file", "_cdc_ingested_at")
        .orderBy("_cdc_position")
        .collect()
    )
    if not truncates:
        return None
    keep = [*columns, *CDC_COLUMNS]
    earlier = events.where("_cdc_op <> 't'").select(*keep)
    if table_exists(spark, path):
        stored = spark.read.format("hudi").load(to_hadoop_uri(path))
        for column in keep:
            if column not in stored.columns:
                stored = stored.withColumn(column, F.lit(None))
        earlier = earlier.unionByName(stored.select(*keep), allowMissingColumns=True)
    deletes: DataFrame | None = None
    latest = Window.partitionBy(*table.key).orderBy(F.col("_cdc_position").desc())
    for truncate in truncates:
        wiped = (
            earlier.where(F.col("_cdc_position") < truncate["_cdc_position"])
            .withColumn("_rank", F.row_number().over(latest))
            .where("_rank = 1")
            .drop("_rank")
            .withColumn("_cdc_op", F.lit("t"))
            .withColumn("_cdc_position", F.lit(truncate["_cdc_position"]))
            .withColumn("_cdc_source_ts", F.lit(truncate["_cdc_source_ts"]))
            .withColumn("_cdc_source_file", F.lit(truncate["_cdc_source_file"]))
            .withColumn("_cdc_is_deleted", F.lit(True))
        )
        deletes = wiped if deletes is None else deletes.unionByName(wiped)
    return deletes


def _bronze_frame(
    spark: SparkSession, table: TableConfig, path: str, events: DataFrame, columns: list[str]
) -> DataFrame:
    """Rows for the bronze commit: changes plus truncate deletes, per the delete mode."""
    rows = events.where("_cdc_op <> 't'").select(*columns, *CDC_COLUMNS)
    deletes = _truncate_deletes(spark, table, path, events, columns)
    if deletes is not None:
        rows = rows.unionByName(deletes.select(*columns, *CDC_COLUMNS))
    if table.delete_mode == "hard":
        rows = rows.withColumn(hudi_writer.HARD_DELETE_COLUMN, F.col("_cdc_is_deleted"))
    return rows


def ingest_table(
    spark: SparkSession,
    conf: Settings,
    table: TableConfig,
    ingested_at: str,
    log: Callable[[str], None],
) -> TableResult:
    """Apply a table's new landing files; commit nothing when there are none."""
    started = time.monotonic()
    result = TableResult(table.name)
    bronze_path = table_path(conf, table.database, table.name)
    changelog_path = table_path(conf, table.database, table.changelog_name)
    quarantine_path = table_path(conf, table.database, QUARANTINE)

    bronze_checkpoint = read_checkpoint(spark, bronze_path, table.topic)
    changelog_checkpoint = read_checkpoint(spark, changelog_path, table.topic)
    listed = list_topic_files(spark, conf.landing, table.topic)
    # The older of the two checkpoints: after a crash between the two commits,
    # the table that is behind catches up; the other ignores what it has.
    behind = {
        p: min(bronze_checkpoint.offsets.get(p, -1), changelog_checkpoint.offsets.get(p, -1))
        for p in {f.partition for f in listed}
    }
    files = new_files(listed, behind)
    result.files = len(files)
    if not files:
        result.seconds = round(time.monotonic() - started, 2)
        return result
    log(f"{table.name}: {len(files)} new file(s) from {table.topic}")

    declared = {**_existing_columns(spark, bronze_path), **table.columns}
    spec = DecodeSpec(table.source.connector, table.key, declared)
    lines = classify(
        read_lines(
            spark,
            [f.path for f in files if f.format == "json"],
            [f.path for f in files if f.format == "avro"],
        )
    )
    decoded = decode(lines, spec, ingested_at)
    events = decoded.events.cache()
    columns = list(decoded.columns)

    flavours = {
        r["flavour"]: r["count"] for r in decoded.lines.groupBy("flavour").count().collect()
    }
    result.tombstones = flavours.get("tombstone", 0)
    result.events = {r["_cdc_op"]: r["count"] for r in events.groupBy("_cdc_op").count().collect()}

    rejects = decoded.rejects.cache()
    result.quarantined = rejects.count()
    if result.quarantined:
        quarantine = rejects.select(
            "raw",
            "source_file",
            "line",
            F.lit(table.name).alias("table_name"),
            "reason",
            F.lit(ingested_at).cast("timestamp").alias("quarantined_at"),
        )
        with QUARANTINE_LOCK:  # one table, shared by every bronze table's job
            new_quarantine = not table_exists(spark, quarantine_path)
            hudi_writer.write(
                quarantine,
                quarantine_path,
                hudi_writer.quarantine_options(table.database, conf.shuffle_partitions),
                "upsert",
                new_quarantine,
            )
            catalog.register(spark, table.database, QUARANTINE, quarantine_path)

    checkpoint = Checkpoint(table.topic, advance(behind, files), tuple(f.path for f in files))
    new_changelog = not table_exists(spark, changelog_path)
    hudi_writer.write(
        events.select(*columns, *CDC_COLUMNS, "_cdc_event_id"),
        changelog_path,
        {
            **hudi_writer.changelog_options(table, conf.shuffle_partitions),
            **write_options(checkpoint),
        },
        "bulk_insert" if new_changelog else "upsert",
        new_changelog,
    )

    bronze = _bronze_frame(spark, table, bronze_path, events, columns).cache()
    result.deleted = bronze.where("_cdc_is_deleted").count()
    result.upserted = bronze.count() - result.deleted
    new_bronze = not table_exists(spark, bronze_path)
    only_inserts = set(result.events) <= {"r", "c"}
    hudi_writer.write(
        bronze,
        bronze_path,
        {**hudi_writer.bronze_options(table, conf.shuffle_partitions), **write_options(checkpoint)},
        "bulk_insert" if new_bronze and only_inserts else "upsert",
        new_bronze,
    )
    catalog.register(spark, table.database, table.changelog_name, changelog_path)
    catalog.register(spark, table.database, table.name, bronze_path)

    for frame in (bronze, rejects, events, decoded.lines):
        frame.unpersist()
    result.committed = True
    result.seconds = round(time.monotonic() - started, 2)
    return result


def ingest(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    log: Callable[[str], None],
    run_record: Path | None = None,
) -> list[TableResult]:
    """Ingest each table once; write the run record; return the per-table results."""
    ingested_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    started = time.monotonic()
    for database in sorted({t.database for t in tables}):
        catalog.ensure_database(spark, database, f"{conf.lake.rstrip('/')}/{database}")
    # Tables are independent; overlapping their commits hides Hudi's per-commit latency.
    with ThreadPoolExecutor(max_workers=max(1, conf.parallel_tables)) as pool:
        results = list(
            pool.map(lambda table: ingest_table(spark, conf, table, ingested_at, log), tables)
        )
    if run_record is not None:
        run_record.parent.mkdir(parents=True, exist_ok=True)
        run_record.write_text(
            json.dumps(
                {
                    "started_at": ingested_at,
                    "seconds": round(time.monotonic() - started, 2),
                    "landing": conf.landing,
                    "lake": conf.lake,
                    "tables": [
                        {**asdict(r), "events_per_second": r.events_per_second} for r in results
                    ],
                },
                indent=2,
            )
        )
    return results
