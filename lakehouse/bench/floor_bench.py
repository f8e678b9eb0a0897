"""`lakehouse bench floor`: ours against the ceiling and against what Hudi itself costs.

`bench ingest` compares ours with a plain-Spark ceiling that writes one
Parquet copy and no table format. For each batch ours writes two Hudi tables,
the changelog and bronze. This bench adds the floor (`lakehouse.bench.floor`):
those two writes of rows that are read typed and not decoded. The three run
on the same snapshot in one measured process, alternated. Ours/floor is what
the decoder and the engine can still win; floor/ceiling is the format's
cost, which no decoder work can win back.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingestion.errors import UserError
from ingestion.settings import settings
from lakehouse.bench import report
from lakehouse.bench.contenders import catalog_running, fresh, process_env, python_module
from lakehouse.bench.ingest_bench import LABELS as INGEST_LABELS
from lakehouse.bench.measure import run_measured
from lakehouse.bench.staging import Landing, reuse_or_generate, stage
from lakehouse.output import console

DATABASE = "bench_floor"
LABELS = {
    "ceiling": INGEST_LABELS["ceiling"],
    "floor": "floor: typed JSON -> changelog + bronze Hudi bulk inserts",
    "ours": INGEST_LABELS["ours"],
}
# Ratios of events/s: (name, the faster side, the slower side).
RATIOS = (
    ("ours/ceiling", "ceiling", "ours"),
    ("floor/ceiling", "ceiling", "floor"),
    ("ours/floor", "floor", "ours"),
)


def floor_command(landing: Landing, root: Path, rounds: int) -> list[str]:
    """The measured worker's command, the snapshot staged for it in `root`."""
    staged = stage(landing, 0, root / "landing")
    files = root / "snapshot.json"
    files.write_text(json.dumps(staged))
    args = ["--files", str(files), "--landing", str(root / "landing")]
    args += ["--out", str(root / "out"), "--database", DATABASE, "--rounds", str(rounds)]
    return python_module("lakehouse.bench.floor", *args)


def results_of(events: int, result: dict[str, Any]) -> dict[str, Any]:
    """Medians, events/s and ratios from the worker's seconds; valid if both lakes agree."""
    seconds: dict[str, list[float]] = result["seconds"]
    median = {phase: statistics.median(runs) for phase, runs in seconds.items()}
    rows = result["rows"]
    return {
        "events": events,
        "seconds": seconds,
        "median_seconds": median,
        "events_per_second": {phase: round(events / m) for phase, m in median.items()},
        "ratios": {name: round(median[fast] / median[slow], 3) for name, fast, slow in RATIOS},
        "rows": rows,
        "valid": rows["floor"] == rows["ours"] and rows["ours"]["bronze"] > 0,
    }


def ratios_text(results: dict[str, Any]) -> str:
    """`ours/ceiling 0.14x, floor/ceiling 0.23x, ours/floor 0.59x`: events/s over events/s."""
    return ", ".join(f"{name} {report.ratio(v)}" for name, v in results["ratios"].items())


def markdown(results: dict[str, Any]) -> str:
    """The table `bench floor` prints and writes beside its JSON."""
    rounds = len(results["seconds"]["ours"])
    header = ["contender", *[f"round {n} s" for n in range(1, rounds + 1)], "median s", "events/s"]
    rows = [
        [
            LABELS[phase],
            *[report.number(s, 1) for s in results["seconds"][phase]],
            report.number(results["median_seconds"][phase], 1),
            report.number(results["events_per_second"][phase]),
        ]
        for phase in results["seconds"]
    ]
    lines = [
        f"### bench floor --scale {results['scale']:g} ({results['events']:,} snapshot events)",
        "",
        report.markdown_table(header, rows),
        "",
        f"events/s: {ratios_text(results)}. Peak RSS {report.gib(results['peak_rss_bytes'])}. "
        "Rows read back (changelog / bronze): "
        + "; ".join(f"{k} {v['changelog']:,} / {v['bronze']:,}" for k, v in results["rows"].items())
        + ("" if results["valid"] else " **(the floor's and ours differ: void)**"),
    ]
    return "\n".join(lines)


def run_floor_bench(
    scale: float, rounds: int, results_dir: Path | None = None, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Generate (or reuse) a snapshot, run the three alternated, report; return the results."""
    if rounds < 1:
        raise UserError(f"--rounds {rounds}: give the number of alternated rounds, 1 or more")
    started = time.monotonic()
    conf = settings()
    work = conf.home / "bench" / "floor"
    landing = reuse_or_generate(work / "source", scale, 0, log)
    command = floor_command(landing, fresh(work / "run"), rounds)
    progress = work / "logs" / "floor.log"
    log(
        f"{landing.events(0):,} snapshot events; ceiling, floor and ours, {rounds} round(s); "
        f"each phase's seconds as it ends: {progress}"
    )
    load_before = report.machine()["load_average_1m"]
    with catalog_running(conf, log):
        run = run_measured(command, process_env(), progress)
    results = {"scale": scale, **results_of(landing.events(0), run.result)}
    results |= {
        "peak_rss_bytes": run.peak_rss_bytes,
        "machine": report.machine(),
        "load_average_before": load_before,
        "seconds_total": round(time.monotonic() - started, 1),
    }
    text = markdown(results)
    results["results_file"] = str(report.write(f"floor-scale{scale:g}", results, text, results_dir))
    console.print(text, markup=False, soft_wrap=True)
    log(
        f"bench floor done in {results['seconds_total']:.0f}s: {ratios_text(results)}"
        + ("" if results["valid"] else "; void: the floor's and ours' rows differ")
    )
    return results
