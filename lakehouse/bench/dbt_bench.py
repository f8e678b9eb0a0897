"""`lakehouse bench dbt`: a full `dbt build`, then the incremental ones after two 1% change batches.

The full build is the daily job's (every test on every row); the incremental
ones run with the hourly job's arguments from conf/jobs.yml (its test scope),
as that job would after each batch. Two hours, because they differ: the first
incremental build after the full one is the first time the Thrift server runs
the merge path (its Java code compiled as it goes, Spark's generated code
compiled for each new query), and the next hour's build runs the same queries
again with a new watermark, as every hourly build but the first after a
server start does. Both ratios to the full build are reported. The run uses
its own bronze database and dbt schema (`bench_dbt_*`), so it never touches
the main job's or the tests' marts. Bronze is filled by our ingestion (not
timed here: `bench ingest` measures it). Per-layer seconds are the sums of
dbt's own `execution_time` per model folder (and for tests), from
run_results.json; with several threads they add up to more than the wall time.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse.bench import report
from lakehouse.bench.contenders import fresh, process_env, python_module, thrift_running
from lakehouse.bench.measure import run_measured
from lakehouse.bench.staging import Landing, reuse_or_generate, stage
from lakehouse.dbt_wrapper import dbt_env, dbt_executable
from lakehouse.output import console
from lakehouse.scheduler.jobs_file import build_args, get_job

DATABASE = "bench_dbt_bronze"
DBT_SCHEMA = "bench_dbt"  # models land in bench_dbt_staging, bench_dbt_intermediate, ...
MARTS_SCHEMA = "bench_dbt_marts"
LAYERS = ("staging", "intermediate", "marts", "tests")
# The builds, in order: the full one, then the hourly job's after each change batch.
BUILDS = {"full": "full", "incremental": "first hour", "next_incremental": "next hour"}
INCREMENTALS = ("incremental", "next_incremental")  # one per change batch
HOURS = len(INCREMENTALS)
INCREMENTAL_GOAL = 0.25  # the incremental build should take at most a quarter of a full one
SLOWEST_MODELS = 6  # per build in the Markdown
PARSE_STATE = "partial_parse.msgpack"  # what dbt keeps in its target path between runs
FULL_PARSE = "Unable to do partial parsing"  # what dbt logs when it cannot use that state


def layer_of(node: dict[str, Any]) -> str:
    """staging / intermediate / marts for models (their folder), tests, or the resource type."""
    kind = node.get("resource_type", "")
    if kind == "model":
        fqn = node.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "models"
    if kind == "test":
        return "tests"
    return kind.replace("_", " ")


def summarise_run(target: Path) -> dict[str, Any]:
    """Per-layer seconds and node statuses from dbt's run_results.json and manifest.json."""
    run_results = json.loads((target / "run_results.json").read_text())
    nodes = json.loads((target / "manifest.json").read_text())
    known = {**nodes.get("nodes", {}), **nodes.get("unit_tests", {})}
    layers: dict[str, float] = defaultdict(float)
    models: dict[str, float] = {}
    statuses: Counter[str] = Counter()
    for result in run_results["results"]:
        node = known.get(result["unique_id"], {})
        layers[layer_of(node)] += result["execution_time"]
        if node.get("resource_type") == "model":
            models[node["name"]] = round(result["execution_time"], 2)
        statuses[result["status"]] += 1
    return {
        "dbt_elapsed_seconds": round(run_results.get("elapsed_time", 0.0), 2),
        "nodes": sum(statuses.values()),
        "statuses": dict(statuses),
        "layer_seconds": {name: round(seconds, 2) for name, seconds in sorted(layers.items())},
        "model_seconds": dict(sorted(models.items(), key=lambda item: -item[1])),
    }


def _env(conf: Settings, target: Path) -> dict[str, str]:
    # The bench's own names, passed as settings: dbt gets them like any other run.
    bench = dataclasses.replace(
        conf, bronze_database=DATABASE, dbt_schema=DBT_SCHEMA, marts_schema=MARTS_SCHEMA
    )
    env = dbt_env(bench)
    env["DBT_TARGET_PATH"] = str(target)
    return env


def target_path(work: Path, name: str) -> Path:
    """Where one build's dbt artifacts go (DBT_TARGET_PATH)."""
    return work / f"target-{name}"


def build(
    conf: Settings,
    args: list[str],
    work: Path,
    name: str,
    thrift_pid: int,
    previous: Path | None = None,
) -> dict[str, Any]:
    """One measured `dbt build`; memory is dbt's process tree plus the Thrift server.

    Each build writes its own target folder, but starts from the parse state
    the `previous` build left, as `lakehouse jobs run` does in the project's
    one target path (conf/lakehouse.yml `dbt_target_path`). dbt reuses it only
    when nothing it parsed changed, the vars included: the first hourly build
    after the full one parses everything again (its vars differ), the next
    hour's build re-reads the previous hour's parse, as hourly jobs in a row do.
    """
    target = fresh(target_path(work, name))
    log_file = work / "logs" / f"dbt-{name}.log"
    if previous is not None and (previous / PARSE_STATE).exists():
        shutil.copy2(previous / PARSE_STATE, target / PARSE_STATE)
    run = run_measured(
        [dbt_executable(), "build", *args],
        _env(conf, target),
        log_file,
        cwd=PROJECT_DIR,
        also_sample=[thrift_pid] if thrift_pid else [],
        check=False,
    )
    found = summarise_run(target) if (target / "run_results.json").exists() else {}
    return {
        "args": args,
        "seconds": run.seconds,
        "peak_rss_bytes": run.peak_rss_bytes,
        "returncode": run.returncode,
        "log": run.log,
        "parse": "full" if FULL_PARSE in log_file.read_text(errors="replace") else "partial",
        **found,
    }


def ingest(landing: Landing, batch: int, work: Path) -> dict[str, Any]:
    """Our ingestion of one batch into the benchmark's bronze database (setup, not the figure)."""
    stage(landing, batch, work / "landing")
    command = python_module(
        "lakehouse.bench.ours",
        "--landing",
        str(work / "landing"),
        "--lake",
        str(work / "lake"),
        "--database",
        DATABASE,
    )
    run = run_measured(command, process_env(), work / "logs" / f"ingest-{batch}.log")
    return {
        "seconds": run.seconds,
        "peak_rss_bytes": run.peak_rss_bytes,
        "events": landing.events(batch),
    }


def _build_row(label: str, b: dict[str, Any]) -> list[str]:
    layers = b.get("layer_seconds", {})
    return [
        label,
        report.number(b["seconds"], 1),
        str(b.get("nodes", "-")),
        *(report.number(layers.get(layer), 1) for layer in LAYERS),
        report.gib(b["peak_rss_bytes"]),
        "ok" if b["returncode"] == 0 else f"exit {b['returncode']}",
    ]


def _ratio_line(results: dict[str, Any], name: str) -> str:
    met = results["goals"][f"{name}_at_most_a_quarter"]
    return (
        f"- {BUILDS[name]} incremental/full: {report.ratio(results[f'{name}_vs_full'])} "
        f"(goal: at most {INCREMENTAL_GOAL:.2f}x: {'met' if met else 'NOT met'})"
    )


def markdown(results: dict[str, Any]) -> str:
    table = report.markdown_table(
        [
            "dbt build",
            "wall s",
            "nodes",
            *(f"{layer} s" for layer in LAYERS),
            "peak RSS (dbt + Thrift server)",
            "status",
        ],
        [_build_row(label, results[name]) for name, label in BUILDS.items()],
    )
    select = "".join(
        f" --{name} {results[name]}" for name in ("select", "exclude") if results[name]
    )
    slowest = [
        f"- slowest models, {label} build (dbt execution_time): "
        + ", ".join(
            f"{model} {seconds:.1f} s"
            for model, seconds in list(results[name].get("model_seconds", {}).items())[
                :SLOWEST_MODELS
            ]
        )
        for name, label in BUILDS.items()
    ]
    return "\n".join(
        [
            f"### bench dbt --scale {results['scale']}{select}",
            "",
            f"{results['rows']:,} snapshot rows in bronze, then {HOURS} change batches of 1% of "
            f"rows ({results['change_events']:,} events in the first), each followed by an "
            "incremental build; per-layer seconds are sums of dbt's execution_time per node "
            "(2 threads).",
            "",
            table,
            "",
            f"- incremental builds: `dbt build {' '.join(results['incremental']['args'])}` "
            "(the hourly job's arguments)",
            "- parsing: each build starts from the previous one's parse state, as the "
            "jobs do in the project's target path; "
            + ", ".join(
                f"{label} {results[name].get('parse', '?')}" for name, label in BUILDS.items()
            ),
            *slowest,
            *(_ratio_line(results, name) for name in INCREMENTALS),
            _setup_line(results["setup_ingest"]),
            *([] if results["valid"] else ["- **a dbt build failed: figures void** (see its log)"]),
        ]
    )


def _setup_line(setup: list[dict[str, Any]]) -> str:
    """The setup ingestions' own figures: not the benchmark's, but ingestion at this scale."""
    runs = ", ".join(
        f"{'snapshot' if batch == 0 else f'batch {batch}'} {run['events']:,} events in "
        f"{run['seconds']:.0f} s, peak RSS {report.gib(run['peak_rss_bytes'])}"
        for batch, run in enumerate(setup)
    )
    return f"- setup ingestion (ours, beside the idle Thrift server): {runs}"


def _ratio(build: dict[str, Any], full: dict[str, Any]) -> float | None:
    # A failed build's seconds say nothing about a successful one: no ratio then.
    if full["returncode"] != 0 or build["returncode"] != 0:
        return None
    return round(build["seconds"] / full["seconds"], 3)


def _builds(
    conf: Settings, landing: Landing, work: Path, selection: list[str], log: Callable[[str], None]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The setup ingestions and the three measured builds, with the stack up."""
    steps = 2 + 2 * HOURS
    hourly = list(build_args(get_job("hourly", conf)))
    with thrift_running(conf, log) as thrift_pid:
        log(f"1/{steps} ingest the snapshot ({landing.events(0):,} events) into {DATABASE}")
        setup = [ingest(landing, 0, work)]
        log(f"2/{steps} full dbt build (--full-refresh)")
        builds = {"full": build(conf, ["--full-refresh", *selection], work, "full", thrift_pid)}
        full = builds["full"]
        log(f"  full build: {full['seconds']:.1f} s, {full.get('nodes', 0)} nodes")
        previous = target_path(work, "full")
        for hour, name in enumerate(INCREMENTALS, start=1):
            events = landing.events(hour)
            log(f"{2 * hour + 1}/{steps} ingest change batch {hour} ({events:,} events)")
            setup.append(ingest(landing, hour, work))
            log(
                f"{2 * hour + 2}/{steps} incremental dbt build, {BUILDS[name]} "
                f"(the hourly job's: dbt build {' '.join(hourly)})"
            )
            builds[name] = build(conf, [*hourly, *selection], work, name, thrift_pid, previous)
            previous = target_path(work, name)
            log(f"  {BUILDS[name]}: {builds[name]['seconds']:.1f} s")
    return setup, builds


def run_dbt_bench(
    scale: float,
    select: str | None = None,
    exclude: str | None = None,
    results_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Snapshot, full build, then per hour 1% changes and an incremental build; report."""
    started = time.monotonic()
    conf = settings()
    work = conf.home / "bench" / "dbt"
    landing = reuse_or_generate(work / "source", scale, HOURS, log, faults=False)
    for folder in ("landing", "lake", "logs"):
        fresh(work / folder)
    selection = [
        *(["--select", select] if select else []),
        *(["--exclude", exclude] if exclude else []),
    ]
    setup, builds = _builds(conf, landing, work, selection, log)
    ratios = {name: _ratio(builds[name], builds["full"]) for name in INCREMENTALS}
    results: dict[str, Any] = {
        "benchmark": "dbt",
        "scale": scale,
        "select": select or "",
        "exclude": exclude or "",
        "rows": landing.events(0),
        "change_events": landing.events(1),
        "machine": report.machine(),
        "setup_ingest": setup,
        **builds,
        **{f"{name}_vs_full": ratio for name, ratio in ratios.items()},
        "goals": {
            f"{name}_at_most_a_quarter": ratio is not None and ratio <= INCREMENTAL_GOAL
            for name, ratio in ratios.items()
        },
        "valid": all(b["returncode"] == 0 for b in builds.values()),
        "seconds": round(time.monotonic() - started, 1),
    }
    _report(results, results_dir, log)
    return results


def _report(results: dict[str, Any], results_dir: Path | None, log: Callable[[str], None]) -> None:
    """Write the results file and the Markdown table; print both and a closing line."""
    text = markdown(results)
    path = report.write(f"dbt-scale{results['scale']:g}", results, text, results_dir)
    results["results_file"] = str(path)
    console.print(text, markup=False, soft_wrap=True)
    full, first, following = (results[name] for name in BUILDS)
    log(
        f"bench dbt done in {results['seconds']:.0f}s: full {full['seconds']:.1f}s, incremental "
        f"{first['seconds']:.1f}s then {following['seconds']:.1f}s, ratios "
        f"{report.ratio(results['incremental_vs_full'])} and "
        f"{report.ratio(results['next_incremental_vs_full'])}"
        f"{'' if results['valid'] else ' (a dbt build failed: see its log)'}; {path}"
    )
