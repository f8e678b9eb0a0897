"""`lakehouse bench tables`: what a batch costs per table when many small tables change.

A whole database is tens to hundreds of tables, most of them small. This
bench serves N one-row tables from landing files (a snapshot run, not timed,
creates them), then times rounds of two micro-batches of one engine, as the
continuous service runs them: one change in one table, and one change in
every table. Their difference over N - 1 is the batch's cost per changed
table; their ratio is the goal's figure (N changed tables in at most 3x the
time of one). Every table's row is read back at the end and must hold its
last change.

Beside it, in the same session, the floor: what Hudi itself costs for the two
commits a changed table takes (its changelog and bronze), as two bare
one-row upserts per table into small tables of the same layout, tables side
by side as the engine runs them.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from ingestion.config import Source, TableConfig
from ingestion.engine import Engine
from ingestion.errors import UserError
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import Settings, settings
from ingestion.spark import build_session
from lakehouse.bench import report
from lakehouse.bench.contenders import catalog_running, fresh
from lakehouse.output import console

DATABASE = "bench_tables"
SOURCE = Source("bench", "postgresql")
FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "v"},
]


def event_line(table: str, value: str, lsn: int, op: str) -> str:
    """One Debezium PostgreSQL change of row 1 of `table`, as the JsonConverter writes it."""
    row = {"type": "struct", "optional": True, "name": f"bench.public.{table}.Value",
           "fields": FIELDS}  # fmt: skip
    schema = {"type": "struct", "name": f"bench.public.{table}.Envelope", "fields": [
        {**row, "field": "before"}, {**row, "field": "after"},
        {"type": "struct", "fields": [], "optional": False, "field": "source"},
        {"type": "string", "optional": False, "field": "op"},
    ]}  # fmt: skip
    source = {"connector": "postgresql", "db": "bench", "schema": "public", "table": table,
              "lsn": lsn, "ts_ms": 1700000000000 + lsn}  # fmt: skip
    payload = {"before": None, "after": {"id": 1, "v": value}, "source": source, "op": op}
    return json.dumps({"schema": schema, "payload": payload | {"ts_ms": 1}})


def bench_tables(count: int) -> list[TableConfig]:
    return [
        TableConfig(f"t{n:03d}", SOURCE, f"bench.public.t{n:03d}", ("id",), DATABASE)
        for n in range(count)
    ]


def land(conf: Settings, table: TableConfig, offset: int, value: str, op: str) -> None:
    """One sink file of the table's topic, holding one change."""
    folder = Path(conf.landing) / "topics" / table.topic
    folder.mkdir(parents=True, exist_ok=True)
    line = event_line(table.name, value, 100 + offset, op)
    (folder / f"{table.topic}+0+{offset:010d}.json").write_text(line + "\n")


def timed_batch(engine: Engine, changed: int) -> float:
    """One micro-batch; it must apply exactly one change in each of `changed` tables."""
    started = time.monotonic()
    run = engine.run_batch()
    seconds = time.monotonic() - started
    applied = [r for r in run.tables if r.upserted]
    if len(applied) != changed or any(r.upserted != 1 for r in applied):
        raise UserError(f"bench tables: a batch applied {len(applied)} table(s), not {changed}")
    return round(seconds, 2)


# The floor's tables: bronze's layout for a small table (one bucket, no metadata table).
FLOOR_OPTIONS = {
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.operation": "upsert",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "1",
    "hoodie.metadata.enable": "false",
}


def floor_batch(spark: SparkSession, conf: Settings, count: int, value: int) -> float:
    """Two bare one-row upserts per table (a changelog's and a bronze table's stand-ins),
    `parallel_tables` tables at a time, as the engine runs its tables."""

    def upsert(name: str) -> None:
        frame = spark.createDataFrame([(1, str(value), value)], "id int, v string, ts long")
        path = to_hadoop_uri(f"{conf.lake}/floor/{name}")
        frame.write.format("hudi").options(**FLOOR_OPTIONS, **{"hoodie.table.name": name}).mode(
            "append"
        ).save(path)

    started = time.monotonic()
    with ThreadPoolExecutor(max(1, conf.parallel_tables)) as pool:
        list(pool.map(lambda n: [upsert(f"t{n:03d}_{side}") for side in "ab"], range(count)))
    return round(time.monotonic() - started, 2)


def last_values(spark: SparkSession, conf: Settings, tables: list[TableConfig]) -> list[str]:
    paths = [to_hadoop_uri(table_path(conf, DATABASE, t.name)) for t in tables]
    return [spark.read.format("hudi").load(path).first()["v"] for path in paths]


def measure(
    spark: SparkSession, conf: Settings, count: int, rounds: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """The snapshot run, then `rounds` pairs of batches (one changed table, all changed)."""
    tables = bench_tables(count)
    for table in tables:
        land(conf, table, 0, "snapshot", "r")
    with Engine(spark, conf, tables, log=lambda _: None) as engine:
        started = time.monotonic()
        timed_batch(engine, count)
        setup = round(time.monotonic() - started, 1)
        log(f"snapshot run: {count} tables created in {setup:.1f} s")
        one, every = [], []
        for n in range(1, rounds + 1):
            land(conf, tables[0], 2 * n - 1, f"one {n}", "u")
            one.append(timed_batch(engine, 1))
            for table in tables:
                land(conf, table, 2 * n, f"every {n}", "u")
            every.append(timed_batch(engine, count))
            log(f"round {n}: one table {one[-1]:.2f} s, every table {every[-1]:.2f} s")
    exact = last_values(spark, conf, tables) == [f"every {rounds}"] * count
    floor_batch(spark, conf, count, 0)  # creates the floor's tables
    floor = [floor_batch(spark, conf, count, n) for n in range(1, rounds + 1)]
    log(f"floor: {', '.join(f'{s:.2f}' for s in floor)} s")
    return {"tables": count, "rounds": rounds, "snapshot_seconds": setup,
            "one_table_seconds": one, "every_table_seconds": every, "floor_seconds": floor,
            "valid": exact}  # fmt: skip


def figures(results: dict[str, Any]) -> dict[str, Any]:
    one = statistics.median(results["one_table_seconds"])
    every = statistics.median(results["every_table_seconds"])
    floor = statistics.median(results["floor_seconds"])
    per_table = (every - one) / max(1, results["tables"] - 1)
    return {"one_table_median_seconds": one, "every_table_median_seconds": every,
            "floor_median_seconds": floor, "seconds_per_changed_table": round(per_table, 3),
            "every_over_one": round(every / one, 2) if one else None,
            "every_over_floor": round(every / floor, 2) if floor else None}  # fmt: skip


def markdown(results: dict[str, Any]) -> str:
    header = ["batch", *[f"round {n} s" for n in range(1, results["rounds"] + 1)], "median s"]
    rows = [
        ["one change in one table", *[report.number(s, 2) for s in results["one_table_seconds"]],
         report.number(results["one_table_median_seconds"], 2)],
        [f"one change in each of {results['tables']} tables",
         *[report.number(s, 2) for s in results["every_table_seconds"]],
         report.number(results["every_table_median_seconds"], 2)],
        [f"floor: 2 bare one-row Hudi upserts in each of {results['tables']} tables",
         *[report.number(s, 2) for s in results["floor_seconds"]],
         report.number(results["floor_median_seconds"], 2)],
    ]  # fmt: skip
    return "\n".join([
        f"### bench tables --tables {results['tables']} ({results['tables']} served tables)",
        "",
        report.markdown_table(header, rows),
        "",
        f"{results['every_over_one']}x the one-table batch; "
        f"{results['seconds_per_changed_table']:.3f} s per changed table; "
        f"{results['every_over_floor']}x the floor. Snapshot run "
        f"{results['snapshot_seconds']:.1f} s. Load before {results['load_average_before']:.1f}."
        + ("" if results["valid"] else " **(a table's row differs: void)**"),
    ])  # fmt: skip


def run_tables_bench(
    count: int, rounds: int, results_dir: Path | None = None, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Serve `count` small tables, time the rounds, report; return the results."""
    if count < 2 or rounds < 1:
        raise UserError(f"--tables {count} --rounds {rounds}: give at least 2 tables and 1 round")
    work = fresh(settings().home / "bench" / "tables")
    conf = replace(settings(), landing=str(work / "landing"), lake=str(work / "lake"))
    load_before = report.machine()["load_average_1m"]
    log(f"bench tables: {count} tables, {rounds} round(s) of one changed table and all changed")
    with catalog_running(conf, log):
        spark = build_session("lakehouse-bench-tables", conf, conf.run_dir / "bench-tables.log")
        results = measure(spark, conf, count, rounds, log)
    results |= figures(results) | {"machine": report.machine(), "load_average_before": load_before}
    text = markdown(results)
    results["results_file"] = str(report.write(f"tables-{count}", results, text, results_dir))
    console.print(text, markup=False, soft_wrap=True)
    log(f"bench tables done: {results['every_over_one']}x the one-table batch, "
        f"{results['seconds_per_changed_table']:.3f} s per changed table, "
        f"{results['every_over_floor']}x the floor"
        + ("" if results["valid"] else "; void: a table's row differs"))  # fmt: skip
    return results
