"""Worker: one contender's reads, then is its final state right (vs the generator's `_expected/`)?

Run once per contender, in its own process with its engine's session: first it
times reading every table's live rows in full (what a dbt staging view over the
table costs), then compares the table with the generator's expected state.
Figures of a contender whose tables disagree are void, so this runs after every
benchmark. Comparisons are Spark set differences (both ways, duplicates
counted), so they scale to --scale 10; a key counts once however many of
its columns differ. Values are compared in `_expected/`'s text form.
Run as `python -m lakehouse.bench.verify --engine E --lake DIR --database D --expected DIR`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.config import TableConfig, load_tables
from ingestion.settings import settings
from lakehouse.bench import peers
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


def read_seconds(state: DataFrame) -> float:
    """Seconds to read the live rows in full (every column, no shortcut from statistics)."""
    started = time.monotonic()
    state.where("not _cdc_is_deleted").write.format("noop").mode("overwrite").save()
    return round(time.monotonic() - started, 2)


# Hudi's two cheaper reads of a merge-on-read table's same files, neither exact:
# every file slice read as rows with its log records appended unmerged, and the
# base files alone (the `_ro` view). Hudi returns a merge-on-read table's rows
# one by one, never as columnar batches, so these bound what its snapshot
# read can cost on this layout (decision 0022).
FLOOR_READS = {
    "unmerged": {"hoodie.datasource.merge.type": "skip_merge"},
    "base_files": {"hoodie.datasource.query.type": "read_optimized"},
}


def floor_read_seconds(spark: SparkSession, lake: Path, table: TableConfig) -> dict[str, float]:
    """A merge-on-read table's reads the cheaper ways Hudi offers, timed as `read_seconds`."""
    return {
        name: read_seconds(peers.read_state(spark, "hudi", lake, table, options))
        for name, options in FLOOR_READS.items()
    }


def check_table(spark: SparkSession, args: argparse.Namespace, table: TableConfig) -> dict:
    """One table of one contender: its read time, then its state against the expected one."""
    state = peers.read_state(spark, args.engine, Path(args.lake), table)
    seconds = read_seconds(state)
    found = against_expected(spark, table, state, Path(args.expected) / f"{table.name}.jsonl")
    if args.floor_reads and table.table_type == "mor":
        found["floor_read_seconds"] = floor_read_seconds(spark, Path(args.lake), table)
    return {**found, "read_seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", required=True, choices=peers.ENGINES)
    parser.add_argument("--lake", required=True, help="folder of the contender's databases")
    parser.add_argument("--database", required=True)
    parser.add_argument("--expected", required=True, help="the generator's _expected folder")
    parser.add_argument("--ceiling", help="the ceiling's Parquet folder, to count its rows")
    parser.add_argument(
        "--floor-reads", action="store_true", help="also time Hudi's cheaper merge-on-read reads"
    )
    args = parser.parse_args()

    conf = settings()
    spark = peers.session(
        conf, args.engine, Path(args.lake), f"lakehouse-bench-verify-{args.engine}"
    )
    tables = {
        t.name: check_table(spark, args, t) for t in load_tables(database=args.database).values()
    }
    ceiling_rows = None
    if args.ceiling:
        ceiling_rows = sum(spark.read.parquet(f"{args.ceiling}/{name}").count() for name in tables)
    spark.stop()
    report_result({"tables": tables, "ceiling_rows": ceiling_rows})


if __name__ == "__main__":
    main()
