"""Worker: one peer applies one phase's Debezium files to its tables, the textbook way.

Every peer sees the same rows as ours: the phase's landing files go through
the project's decoder (`ingestion.decode`), so typing, `_cdc_position` and
`_cdc_is_deleted` are computed alike, and what differs is only how the changes
reach the table:

- Delta and Iceberg: the latest change per key by the ordering column (what
  Databricks' APPLY CHANGES does), then `MERGE INTO` with an ordering guard
  (an older change never overwrites a newer row), updating matched keys,
  inserting new ones; deletes are soft (`_cdc_is_deleted`, as ours), or a
  `DELETE` clause for `delete_mode: hard` tables. The snapshot creates the
  table from the latest rows; columns that appear later are added first.
- Hudi, the naive way: every decoded change through the datasource's default
  `upsert`, with the Debezium ordering field and nothing else tuned.

Run as `python -m lakehouse.bench.peer_apply --peer NAME --files staged.json --lake DIR`.
Truncates never reach these peers (the unwrapped format drops them).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ingestion.config import TableConfig, load_tables
from ingestion.decode.events import CDC_COLUMNS, DecodeSpec, classify, decode, read_lines
from ingestion.hudi_writer import HARD_DELETE_COLUMN, ORDERING_COLUMN
from ingestion.paths import to_hadoop_uri
from ingestion.results import ingestion_time
from ingestion.settings import settings
from lakehouse.bench.measure import report_result
from lakehouse.bench.peers import (
    ICEBERG_CATALOG,
    PEERS,
    Peer,
    iceberg_name,
    session,
    table_path,
)


def decoded_changes(spark: SparkSession, table: TableConfig, files: list[str]) -> DataFrame:
    """The phase's events as ours decodes them: source columns plus the `_cdc_*` columns."""
    spec = DecodeSpec(table.source.connector, table.key, dict(table.columns))
    ingested_at = ingestion_time()
    decoded = decode(classify(read_lines(spark, files, [])), spec, ingested_at)
    return decoded.events.where("_cdc_op <> 't'").select(*decoded.columns, *CDC_COLUMNS)


def latest_per_key(changes: DataFrame, table: TableConfig) -> DataFrame:
    """One row per key: its change with the highest ordering value (then source position)."""
    order = [F.col(ORDERING_COLUMN[table.ordering]).desc(), F.col("_cdc_position").desc()]
    latest = Window.partitionBy(*table.key).orderBy(*order)
    return changes.withColumn("_n", F.row_number().over(latest)).where("_n = 1").drop("_n")


def target_name(peer: Peer, lake: Path, table: TableConfig) -> str:
    if peer.engine == "iceberg":
        return iceberg_name(table)
    return f"delta.`{to_hadoop_uri(str(table_path(lake, table)))}`"


def create(peer: Peer, lake: Path, table: TableConfig, rows: DataFrame) -> None:
    """The first phase: the table, created from the snapshot's latest rows."""
    if peer.engine == "delta":
        rows.write.format("delta").save(to_hadoop_uri(str(table_path(lake, table))))
        return
    (
        rows.writeTo(iceberg_name(table))
        .using("iceberg")
        .tableProperty("format-version", "2")
        .tableProperty("write.merge.mode", peer.iceberg_mode)
        .tableProperty("write.update.mode", peer.iceberg_mode)
        .tableProperty("write.delete.mode", peer.iceberg_mode)
        .create()
    )


def aligned(spark: SparkSession, target: str, rows: DataFrame) -> DataFrame:
    """Rows in the target's columns: new source columns added to the table, absent ones null."""
    stored = spark.table(target).schema
    for column in rows.schema.fields:
        if column.name not in stored.fieldNames():
            kind = column.dataType.simpleString()
            spark.sql(f"ALTER TABLE {target} ADD COLUMNS (`{column.name}` {kind})")
    for column in stored.fields:
        if column.name not in rows.columns:
            rows = rows.withColumn(column.name, F.lit(None).cast(column.dataType))
    return rows


def merge_sql(target: str, source: str, table: TableConfig) -> str:
    """The CDC apply: newer changes update, new keys insert, deletes soft or hard."""
    on = " AND ".join(f"t.`{k}` = s.`{k}`" for k in table.key)
    newer = f"s.`{ORDERING_COLUMN[table.ordering]}` >= t.`{ORDERING_COLUMN[table.ordering]}`"
    clauses = []
    if table.delete_mode == "hard":
        clauses.append(f"WHEN MATCHED AND {newer} AND s._cdc_is_deleted THEN DELETE")
    clauses.append(f"WHEN MATCHED AND {newer} THEN UPDATE SET *")
    insert = " AND NOT s._cdc_is_deleted" if table.delete_mode == "hard" else ""
    clauses.append(f"WHEN NOT MATCHED{insert} THEN INSERT *")
    return f"MERGE INTO {target} t USING {source} s ON {on} " + " ".join(clauses)


def table_exists(peer: Peer, lake: Path, table: TableConfig) -> bool:
    """Both keep their log in the table's folder (Iceberg's Hadoop catalog: `metadata/`)."""
    log = "metadata" if peer.engine == "iceberg" else "_delta_log"
    return (table_path(lake, table) / log).is_dir()


def merge(spark: SparkSession, peer: Peer, lake: Path, table: TableConfig, files: list[str]):
    """Delta or Iceberg: latest change per key, then MERGE INTO (or create, the first time).

    The batch is materialized first (`localCheckpoint`): a MERGE reads its source
    more than once, and Iceberg's copy-on-write rewrite refuses a source whose
    plan is not deterministic (the decoder numbers lines with
    monotonically_increasing_id).
    """
    rows = latest_per_key(decoded_changes(spark, table, files), table).localCheckpoint()
    if not table_exists(peer, lake, table):
        create(peer, lake, table, rows)
        return
    target = target_name(peer, lake, table)
    view = f"changes_{table.name}"
    aligned(spark, target, rows).createOrReplaceTempView(view)
    spark.sql(merge_sql(target, view, table))


def hudi_upsert(spark: SparkSession, lake: Path, table: TableConfig, files: list[str]) -> None:
    """Hudi with defaults: the datasource upsert, keyed, ordered by the Debezium position."""
    rows = decoded_changes(spark, table, files)
    if table.delete_mode == "hard":
        rows = rows.withColumn(HARD_DELETE_COLUMN, F.col("_cdc_is_deleted"))
    options = {
        "hoodie.table.name": table.name,
        "hoodie.datasource.write.recordkey.field": ",".join(table.key),
        "hoodie.table.ordering.fields": ORDERING_COLUMN[table.ordering],
        "hoodie.datasource.write.operation": "upsert",
    }
    path = to_hadoop_uri(str(table_path(lake, table)))
    rows.write.format("hudi").options(**options).mode("append").save(path)


def apply(spark: SparkSession, peer: Peer, lake: Path, table: TableConfig, files: list[str]):
    started = time.monotonic()
    if peer.engine == "hudi":
        hudi_upsert(spark, lake, table, files)
    else:
        merge(spark, peer, lake, table, files)
    return table.name, round(time.monotonic() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peer", required=True, choices=[p.name for p in PEERS])
    parser.add_argument("--files", required=True, help="JSON: topic -> the phase's files")
    parser.add_argument("--lake", required=True, help="folder of the peer's tables")
    parser.add_argument("--database", required=True)
    args = parser.parse_args()

    peer = next(p for p in PEERS if p.name == args.peer)
    staged: dict[str, list[str]] = json.loads(Path(args.files).read_text())
    tables = [t for t in load_tables(database=args.database).values() if staged.get(t.topic)]
    conf, lake = settings(), Path(args.lake)
    started = time.monotonic()
    spark = session(conf, peer.engine, lake, f"lakehouse-bench-{peer.name}")
    if peer.engine == "iceberg":
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ICEBERG_CATALOG}.{args.database}")
    ready = time.monotonic()
    # Tables in parallel, as many at once as ours (`parallel_tables`).
    with ThreadPoolExecutor(max_workers=max(1, conf.parallel_tables)) as pool:
        seconds = dict(pool.map(lambda t: apply(spark, peer, lake, t, staged[t.topic]), tables))
    done = time.monotonic()
    spark.stop()
    report_result(
        {
            "startup_seconds": round(ready - started, 2),
            "work_seconds": round(done - ready, 2),
            "tables": seconds,
        }
    )


if __name__ == "__main__":
    main()
