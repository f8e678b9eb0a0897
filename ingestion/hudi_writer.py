"""Writes through the Hudi Spark datasource: options per table kind, one place.

Bronze tables take the latest change per key by `_cdc_position` through Hudi's
own ordering field and EVENT_TIME_ORDERING merge mode: within a batch the
combine step keeps the highest position, across batches an incoming record
older than the stored one is ignored. The index is Hudi's record-level index,
which is global: a key whose partition value changes is moved, never copied.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from ingestion.config import TableConfig
from ingestion.paths import to_hadoop_uri

ORDERING_COLUMN = {"source_position": "_cdc_position", "source_ts": "_cdc_source_ts"}
HARD_DELETE_COLUMN = "_hoodie_is_deleted"


def _key_options(name: str, database: str, keys: tuple[str, ...], partitions: tuple[str, ...]):
    if partitions:
        generator = "org.apache.hudi.keygen.ComplexKeyGenerator"
    elif len(keys) == 1:
        generator = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    else:
        generator = "org.apache.hudi.keygen.ComplexKeyGenerator"
    return {
        "hoodie.table.name": name,
        "hoodie.database.name": database,
        "hoodie.datasource.write.recordkey.field": ",".join(keys),
        "hoodie.datasource.write.partitionpath.field": ",".join(partitions),
        "hoodie.datasource.write.keygenerator.class": generator,
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }


def _common_options(parallelism: int) -> dict[str, str]:
    return {
        "hoodie.upsert.shuffle.parallelism": str(parallelism),
        "hoodie.insert.shuffle.parallelism": str(parallelism),
        "hoodie.bulkinsert.shuffle.parallelism": str(parallelism),
        "hoodie.delete.shuffle.parallelism": str(parallelism),
        "hoodie.combine.before.insert": "true",
        "hoodie.combine.before.upsert": "true",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        # Column statistics serve data skipping on wide scans; bronze is read whole.
        "hoodie.metadata.index.column.stats.enable": "false",
    }


def bronze_options(table: TableConfig, parallelism: int) -> dict[str, str]:
    """Options of a bronze (current state) table."""
    options = {
        **_key_options(table.name, table.database, table.key, table.partition_by),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": (
            "MERGE_ON_READ" if table.table_type == "mor" else "COPY_ON_WRITE"
        ),
        "hoodie.table.ordering.fields": ORDERING_COLUMN[table.ordering],
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.global.record.level.index.enable": "true",
        "hoodie.record.index.update.partition.path": "true",
    }
    if table.table_type == "mor":
        options["hoodie.compact.inline"] = "true"
        options["hoodie.compact.inline.max.delta.commits"] = "5"
    return options


def changelog_options(table: TableConfig, parallelism: int) -> dict[str, str]:
    """Options of the append-only changelog: one row per event id, duplicates collapse."""
    return {
        **_key_options(table.changelog_name, table.database, ("_cdc_event_id",), ()),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.table.ordering.fields": "_cdc_position",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        # Append-mostly and read whole: no index to keep in a metadata table.
        "hoodie.metadata.enable": "false",
        "hoodie.index.type": "SIMPLE",
    }


def quarantine_options(database: str, parallelism: int) -> dict[str, str]:
    """Options of the quarantine: one row per (file, line), so reruns overwrite, not add."""
    return {
        **_key_options("_quarantine", database, ("source_file", "line"), ()),
        **_common_options(parallelism),
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.metadata.enable": "false",
        "hoodie.index.type": "SIMPLE",
    }


def write(
    frame: DataFrame, path: str, options: dict[str, str], operation: str, new_table: bool
) -> None:
    """One Hudi commit: `operation` is bulk_insert, insert or upsert."""
    (
        frame.write.format("hudi")
        .options(**options)
        .option("hoodie.datasource.write.operation", operation)
        .mode("overwrite" if new_table else "append")
        .save(to_hadoop_uri(path))
    )
