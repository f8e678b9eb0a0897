"""Worker: the ceiling, Hudi's floor and ours on the same snapshot, alternated in one session.

The floor is the least work that still writes what ours writes for a batch:
the ceiling's typed read, turned into bronze columns by the peers' SQL
transform (`schemas.transform_sql`: Debezium's logical types and the same
`_cdc_position`), given ours' event id, kept once, then bulk-inserted into a
changelog and a bronze table with the project's own Hudi options. Nothing is
classified, checked or quarantined. What ours takes above it is the decoder's
and the engine's; what it takes above the ceiling is the format's.

The three run in one Spark session, in an order that turns each round, so
that the JIT and the machine's drift fall on each alike.
Run as `python -m lakehouse.bench.floor --files staged.json --landing L --out DIR
--database D --rounds N`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from ingestion import hudi_writer
from ingestion.config import TableConfig, load_tables
from ingestion.decode.events import event_id
from ingestion.engine import ingest
from ingestion.kept import kept, release
from ingestion.nothing_new import batch_settings, look_ahead
from ingestion.paths import TablePaths, to_hadoop_uri
from ingestion.settings import Settings, load_settings
from ingestion.spark import build_session
from lakehouse.bench.ceiling import typed_events, typed_lines
from lakehouse.bench.measure import report_result
from lakehouse.bench.schemas import transform_sql

PHASES = ("ceiling", "floor", "ours")


@dataclass(frozen=True)
class Work:
    """What every phase reads and where each writes."""

    spark: SparkSession
    conf: Settings  # ours' settings: the staged landing zone, its lake
    floor: Settings  # the same, with the floor's lake
    tables: list[TableConfig]
    files: dict[str, list[str]]  # table name -> the snapshot's staged files
    out: Path


def bronze_rows(spark: SparkSession, table: TableConfig, files: list[str]) -> DataFrame:
    """The typed read as bronze columns plus ours' event id: what both Hudi writes take."""
    view = f"floor_source_{table.name}"
    typed_lines(spark, table, files).createOrReplaceTempView(view)
    rows = spark.sql(transform_sql(table).replace("<SRC>", view))
    return rows.withColumn("_cdc_event_id", event_id(table.key))


def write_floor(work: Work, table: TableConfig) -> None:
    """The changelog and bronze bulk inserts ours makes for a new table, of rows not decoded."""
    rows = kept(bronze_rows(work.spark, table, work.files[table.name]))
    tasks = hudi_writer.parallelism(rows.count(), work.conf.shuffle_partitions)
    paths = TablePaths.of(work.floor, table)
    changelog = hudi_writer.changelog_options(table, tasks)
    hudi_writer.write(rows, paths.changelog, changelog, "bulk_insert", True)
    layout = hudi_writer.new_layout(table, record_index=False)
    bronze = hudi_writer.bronze_options(table, tasks, layout)
    hudi_writer.write(rows.drop("_cdc_event_id"), paths.bronze, bronze, "bulk_insert", True)
    release(rows)


def write_ceiling(work: Work, table: TableConfig) -> None:
    frame = typed_events(work.spark, table, work.files[table.name])
    frame.write.parquet(str(work.out / "ceiling" / table.name))


def per_table(write: Callable[[Work, TableConfig], None]) -> Callable[[Work], None]:
    """A phase that writes every table, as many at a time as ours runs them."""

    def phase(work: Work) -> None:
        with ThreadPoolExecutor(max_workers=max(1, work.conf.parallel_tables)) as pool:
            list(pool.map(lambda table: write(work, table), work.tables))

    return phase


def run_ours(work: Work) -> None:
    ingest(work.spark, work.conf, work.tables, log=lambda _: None)


RUNS: dict[str, Callable[[Work], None]] = {
    "ceiling": per_table(write_ceiling),
    "floor": per_table(write_floor),
    "ours": run_ours,
}


def timed(work: Work, phase: str) -> float:
    """One phase into an empty folder of its own (the lakes' too: see `main`), in seconds."""
    shutil.rmtree(work.out / phase, ignore_errors=True)
    started = time.monotonic()
    RUNS[phase](work)
    return round(time.monotonic() - started, 2)


def stored_rows(work: Work) -> dict[str, dict[str, int]]:
    """The last round's tables read back: changelog and bronze rows, the floor's and ours."""
    counts: dict[str, dict[str, int]] = {}
    for name, conf in (("floor", work.floor), ("ours", work.conf)):
        paths = [TablePaths.of(conf, table) for table in work.tables]
        counts[name] = {
            "changelog": sum(_rows(work.spark, p.changelog) for p in paths),
            "bronze": sum(_rows(work.spark, p.bronze) for p in paths),
        }
    return counts


def _rows(spark: SparkSession, path: str) -> int:
    return spark.read.format("hudi").load(to_hadoop_uri(path)).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", required=True, help="JSON: topic -> staged landing files")
    parser.add_argument("--landing", required=True, help="the staged landing zone (ours')")
    parser.add_argument("--out", required=True, help="folder of every phase's output")
    parser.add_argument("--database", required=True)
    parser.add_argument("--rounds", type=int, required=True)
    args = parser.parse_args()

    out = Path(args.out)
    conf = load_settings({"landing": args.landing, "lake": str(out / "ours")})
    floor = dataclasses.replace(conf, lake=str(out / "floor"))
    tables = list(load_tables(database=args.database).values())
    staged: dict[str, list[str]] = json.loads(Path(args.files).read_text())
    files = {t.name: staged[t.topic] for t in tables if staged.get(t.topic)}
    tables = [t for t in tables if t.name in files]
    # The driver's JIT as `lakehouse ingest` would choose it for this batch.
    spark = build_session("lakehouse-bench-floor", batch_settings(conf, look_ahead(conf, tables)))
    work = Work(spark, conf, floor, tables, files, out)
    seconds: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for round_ in range(args.rounds):
        turn = round_ % len(PHASES)
        for phase in PHASES[turn:] + PHASES[:turn]:
            seconds[phase].append(timed(work, phase))
            print(f"round {round_ + 1} {phase}: {seconds[phase][-1]} s", flush=True)
    report_result({"seconds": seconds, "rows": stored_rows(work)})
    work.spark.stop()


if __name__ == "__main__":
    main()
