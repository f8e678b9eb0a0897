"""`lakehouse bench reconcile`: the proof's time against one ingest of the same tables.

The live chain (`lakehouse cdc up`) holds the TICKIT tables of `cdc load`
(loaded at `--scale` when it holds none). Once Debezium has published every
row (the chain's markers), two measured processes run one after the other:
`lakehouse ingest` of the chain's tables from Kafka's earliest offsets into a
bronze database of the bench's own, then `lakehouse reconcile` of the same
tables against PostgreSQL and MariaDB. Each is timed whole, JVM start
included, as a user runs them. Reconcile must find every table equal (exit
0), or the figures are void.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingestion.settings import settings
from ingestion.spark import build_session
from lakehouse.bench import report
from lakehouse.bench.contenders import catalog_running, process_env, python_module
from lakehouse.bench.live_latency import chain_ready
from lakehouse.bench.measure import Measured, run_measured
from lakehouse.cdc import markers
from lakehouse.cdc.load import live_tables
from lakehouse.live_job import LIVE_KINDS
from lakehouse.output import console

DATABASE = "bench_reconcile"


def _published(log: Callable[[str], None]) -> float:
    """Wait until Debezium has published every row the databases hold; the seconds waited."""
    conf = settings()
    spark = build_session("lakehouse-bench-reconcile", conf, conf.run_dir / "bench-reconcile.log")
    try:
        return markers.wait_published(spark, conf, markers.write_markers(conf), 1800, log)
    finally:
        spark.stop()


def _measure(name: str, args: list[str], work: Path) -> Measured:
    env = {
        **process_env(),
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        "LAKEHOUSE_SOURCE_KINDS": json.dumps(LIVE_KINDS),
        "LAKEHOUSE_LAKE": str(work / "lake"),
    }
    command = python_module("lakehouse.cli", name, *args)
    return run_measured(command, env, work / "logs" / f"{name}.log", check=False)


def measure(work: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """One ingest of the chain's tables into an empty bronze, then reconcile of the same."""
    tables = [t.name for t in live_tables()]
    log(f"ingest of {len(tables)} tables from Kafka's earliest offsets into {DATABASE}")
    ingest = _measure("ingest", ["--tables", ",".join(tables)], work)
    if ingest.returncode != 0:
        raise RuntimeError(f"the ingest exited {ingest.returncode}; log {ingest.log}")
    log(f"  {ingest.seconds:.1f} s; reconcile of the same tables")
    proof = _measure("reconcile", ["--tables", *tables], work)
    log(f"  {proof.seconds:.1f} s, exit {proof.returncode}")
    lines = Path(proof.log).read_text(errors="replace").splitlines()
    return {
        "tables": tables,
        "ingest_seconds": ingest.seconds,
        "ingest_peak_rss_bytes": ingest.peak_rss_bytes,
        "reconcile_seconds": proof.seconds,
        "reconcile_peak_rss_bytes": proof.peak_rss_bytes,
        "reconcile_exit": proof.returncode,
        "reconcile_lines": [line for line in lines if line.startswith(tuple(tables))],
        "source_rows": _source_rows(lines),
    }


def _source_rows(lines: list[str]) -> int:
    """The rows reconcile counted at the sources, from the run record its last line names."""
    (summary,) = [line for line in lines if line.startswith("reconcile: ")][-1:]
    record = json.loads(Path(summary.rsplit("(results ", 1)[1].rstrip(")")).read_text())
    return sum(table["source_rows"] or 0 for table in record["tables"])


def markdown(results: dict[str, Any]) -> str:
    header = ["process", "seconds", "peak RSS"]
    rows = [
        ["`lakehouse ingest` (the snapshot, from Kafka)",
         report.number(results["ingest_seconds"], 1),
         report.gib(results["ingest_peak_rss_bytes"])],
        ["`lakehouse reconcile`", report.number(results["reconcile_seconds"], 1),
         report.gib(results["reconcile_peak_rss_bytes"])],
    ]  # fmt: skip
    return "\n".join([
        f"### bench reconcile --scale {results['scale']:g}",
        "",
        f"{len(results['tables'])} tables, {results['source_rows']:,} source rows; "
        f"{results['machine']['cpus']} CPUs, load average {results['load_average_before']:.1f} "
        "at start.",
        "",
        report.markdown_table(header, rows),
        "",
        f"reconcile / ingest: {results['reconcile_over_ingest']}x"
        + ("" if results["valid"] else " **(reconcile found a difference: void)**"),
    ])  # fmt: skip


def run_reconcile_bench(
    scale: float, results_dir: Path | None = None, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """The chain up and loaded, every row published; time ingest, then reconcile; report."""
    load_before = report.machine()["load_average_1m"]
    conf, work, loaded_now = chain_ready("reconcile", scale, log)
    if not loaded_now:
        log("the chain holds the tables an earlier `cdc load` made: its scale, not --scale")
    with catalog_running(conf, log):
        log(f"every row published to Kafka after {_published(log):.1f} s")
        results = measure(work, log)
    ratio = results["reconcile_seconds"] / results["ingest_seconds"]
    results |= {"benchmark": "reconcile", "scale": scale, "machine": report.machine(),
                "load_average_before": load_before, "loaded_now": loaded_now,
                "reconcile_over_ingest": round(ratio, 2),
                "valid": results["reconcile_exit"] == 0}  # fmt: skip
    text = markdown(results)
    path = report.write(f"reconcile-scale{scale:g}", results, text, results_dir)
    results["results_file"] = str(path)
    console.print(text, markup=False, soft_wrap=True)
    log(f"bench reconcile done: reconcile {results['reconcile_seconds']:.1f} s, one ingest "
        f"{results['ingest_seconds']:.1f} s ({results['reconcile_over_ingest']}x)"
        + ("" if results["valid"] else "; void: reconcile found a difference"))  # fmt: skip
    return results
