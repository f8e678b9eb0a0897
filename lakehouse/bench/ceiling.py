"""Worker: the ceiling, plain Spark reading the phase's JSON and appending Parquet.

No table format, no keys, no ordering, no upsert: the least work that still
reads every landing line and writes it columnar. Same Spark settings as ours
(`build_session`), given the schema so no inference pass is added.
Run as `python -m lakehouse.bench.ceiling --files staged.json --out DIR`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from ingestion.config import TableConfig, load_tables
from ingestion.spark import build_session
from lakehouse.bench.measure import report_result
from lakehouse.bench.schemas import spark_json_schema


def typed_lines(spark: SparkSession, table: TableConfig, files: list[str]) -> DataFrame:
    """The landing lines read with their schema given (no inference pass); tombstones kept."""
    return spark.read.schema(spark_json_schema(table)).json(files)


def typed_events(spark: SparkSession, table: TableConfig, files: list[str]) -> DataFrame:
    """Each event's unwrapped row as Spark's JSON reader types it: nothing decoded."""
    # Tombstone lines parse to a null payload; they are not events.
    return typed_lines(spark, table, files).where("payload is not null").select("payload.*")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", required=True, help="JSON: topic -> landing files")
    parser.add_argument("--out", required=True, help="folder of the Parquet output")
    args = parser.parse_args()

    staged: dict[str, list[str]] = json.loads(Path(args.files).read_text())
    by_topic = {table.topic: table for table in load_tables().values()}
    started = time.monotonic()
    spark = build_session("lakehouse-bench-ceiling")
    ready = time.monotonic()
    for topic, files in staged.items():
        table = by_topic[topic]
        typed_events(spark, table, files).write.mode("append").parquet(
            str(Path(args.out) / table.name)
        )
    done = time.monotonic()
    spark.stop()
    report_result(
        {
            "startup_seconds": round(ready - started, 2),
            "work_seconds": round(done - ready, 2),
        }
    )


if __name__ == "__main__":
    main()
