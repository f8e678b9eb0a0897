"""Worker: is the final state right? Ours vs the generator's `_expected/`, peer vs ours.

Figures of a run whose tables disagree are void, so this runs after every
benchmark. Comparisons are Spark set differences (both ways, duplicates
counted), so they scale to --scale 10; a key counts once however many of
its columns differ. Values are compared in `_expected/`'s text form.
Run as `python -m lakehouse.bench.verify --expected DIR --ours DIR [...]`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.config import TableConfig, load_tables
from ingestion.sources.landing import to_hadoop_uri
from ingestion.spark import build_session
from lakehouse.bench.measure import report_result


def as_text(frame: DataFrame, name: str) -> Column:
    """A column in `_expected/`'s form: timestamps to the second, dates ISO, decimals scaled."""
    kind = frame.schema[name].dataType
    column = F.col(f"`{name}`")
    if isinstance(kind, T.TimestampType):
        return F.date_format(column, "yyyy-MM-dd HH:mm:ss")
    return column.cast("string")


def differing_keys(left: DataFrame, right: DataFrame, key: list[str]) -> int:
    """Keys whose rows differ between the two frames (missing, extra, duplicated, changed)."""
    changed = left.exceptAll(right).unionByName(right.exceptAll(left))
    return changed.select(*key).distinct().count()


def _text_frame(frame: DataFrame, columns: list[str], deleted: str | None) -> DataFrame:
    selected = [as_text(frame, c).alias(c) for c in columns]
    if deleted:
        selected.append(F.col(deleted).cast("string").alias("_deleted"))
    return frame.select(*selected)


def against_expected(spark: SparkSession, table: TableConfig, ours: DataFrame, path: Path) -> dict:
    """Ours vs the expected final state, every column the generator wrote."""
    first = path.open().readline()
    if not first:
        return {"rows": 0, "differing_keys": ours.count()}
    columns = [c for c in json.loads(first) if c != "_deleted"]
    schema = T.StructType(
        [T.StructField(c, T.StringType()) for c in columns]
        + [T.StructField("_deleted", T.StringType())]
    )
    expected = spark.read.schema(schema).json(str(path))
    present = [c for c in columns if c in ours.columns]
    for missing in set(columns) - set(present):
        ours = ours.withColumn(missing, F.lit(None).cast("string"))
    mine = _text_frame(ours, columns, "_cdc_is_deleted")
    return {
        "rows": expected.count(),
        "differing_keys": differing_keys(mine, expected, list(table.key)),
    }


def against_ours(table: TableConfig, ours: DataFrame, peer: DataFrame) -> dict:
    """Peer vs ours: live rows, configured columns (a fixed-schema peer drops new ones)."""
    columns = list(table.columns)
    mine = _text_frame(ours.where("not _cdc_is_deleted"), columns, None)
    theirs = _text_frame(peer.where("not _cdc_is_deleted"), columns, None)
    return {
        "live_rows": mine.count(),
        "differing_keys": differing_keys(mine, theirs, list(table.key)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--expected", required=True, help="the generator's _expected folder")
    parser.add_argument("--ours", required=True, help="our bronze database folder")
    parser.add_argument("--streamer", help="the peer's database folder, when it ran")
    parser.add_argument("--ceiling", help="the ceiling's Parquet folder, to count its rows")
    args = parser.parse_args()

    spark = build_session("lakehouse-bench-verify")
    tables: dict[str, dict] = {}
    ceiling_rows = 0
    for table in load_tables().values():
        ours = spark.read.format("hudi").load(to_hadoop_uri(f"{args.ours}/{table.name}"))
        found = {
            "expected": against_expected(
                spark, table, ours, Path(args.expected) / f"{table.name}.jsonl"
            )
        }
        if args.streamer:
            peer = spark.read.format("hudi").load(to_hadoop_uri(f"{args.streamer}/{table.name}"))
            found["streamer"] = against_ours(table, ours, peer)
        if args.ceiling:
            ceiling_rows += spark.read.parquet(f"{args.ceiling}/{table.name}").count()
        tables[table.name] = found
    spark.stop()
    report_result(
        {
            "tables": tables,
            "ours_matches_expected": all(
                t["expected"]["differing_keys"] == 0 for t in tables.values()
            ),
            "streamer_matches_ours": (
                all(t["streamer"]["differing_keys"] == 0 for t in tables.values())
                if args.streamer
                else None
            ),
            "ceiling_rows": ceiling_rows if args.ceiling else None,
        }
    )


if __name__ == "__main__":
    main()
