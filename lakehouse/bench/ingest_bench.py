"""`lakehouse bench ingest`: ours vs HoodieStreamer vs plain Spark, on the same CDC.

One run generates TICKIT CDC (unwrapped JSON), then each contender applies
the snapshot and then each change batch, every phase in its own measured
process, on its own copy of the landing zone, with the same Spark settings
and jars. Then the final state is checked (ours against the generator's
expected state, the peer against ours); if it is wrong the figures are void.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestion.config import load_tables
from ingestion.settings import Settings, settings
from lakehouse.bench import report, streamer
from lakehouse.bench.contenders import catalog_running, fresh, process_env, python_module
from lakehouse.bench.measure import Measured, run_measured
from lakehouse.bench.staging import Landing, generate_landing, open_landing, stage
from lakehouse.output import console

DATABASE = "bench_bronze"
CONTENDERS = {
    "ours": "ours (lakehouse ingest)",
    "streamer": "HoodieStreamer (DeltaStreamer)",
    "ceiling": "ceiling: plain Spark JSON -> Parquet",
}


@dataclass
class Contender:
    """One contender's figures over all phases."""

    name: str
    status: str = "ran"  # ran | unavailable
    reason: str = ""
    phases: list[dict[str, Any]] = field(default_factory=list)

    def add(self, phase: int, events: int, runs: list[Measured]) -> None:
        self.phases.append(
            {
                "batch": phase,
                "events": events,
                "seconds": round(sum(r.seconds for r in runs), 2),
                "work_seconds": round(sum(r.result.get("work_seconds", 0.0) for r in runs), 2),
                "peak_rss_bytes": max(r.peak_rss_bytes for r in runs),
                "processes": len(runs),
            }
        )

    def summary(self) -> dict[str, Any]:
        if self.status != "ran":
            return {"status": self.status, "reason": self.reason}
        snapshot = [p for p in self.phases if p["batch"] == 0]
        changes = [p for p in self.phases if p["batch"] > 0]
        return {
            "status": self.status,
            "snapshot": _phase_figures(snapshot),
            "changes": _phase_figures(changes),
            "wall_seconds": round(sum(p["seconds"] for p in self.phases), 2),
            "peak_rss_bytes": max(p["peak_rss_bytes"] for p in self.phases),
            "batches": self.phases,
        }


def _phase_figures(phases: list[dict[str, Any]]) -> dict[str, Any]:
    events = sum(p["events"] for p in phases)
    seconds = sum(p["seconds"] for p in phases)
    return {
        "events": events,
        "seconds": round(seconds, 2),
        "events_per_second": round(events / seconds, 1) if seconds else None,
    }


def _landing(work: Path, scale: float, batches: int, log: Callable[[str], None]) -> Landing:
    """The generated CDC, reused when a previous run generated the same options."""
    source = work / "source"
    manifest = source / "_manifest.json"
    if manifest.exists():
        options = json.loads(manifest.read_text())["options"]
        if options["scale"] == scale and options["change_batches"] == batches:
            log(f"reusing the CDC generated earlier in {source}")
            return open_landing(source)
    log(f"generating TICKIT CDC, scale {scale}, {batches} change batch(es) -> {source}")
    return generate_landing(source, scale, batches, progress=True)


def run_ours(landing: Landing, work: Path, log: Callable[[str], None]) -> Contender:
    contender = Contender("ours")
    root, env = fresh(work / "ours"), process_env()
    for batch in range(landing.batches):
        stage(landing, batch, root / "landing")
        command = python_module(
            "lakehouse.bench.ours",
            "--landing",
            str(root / "landing"),
            "--lake",
            str(root / "lake"),
            "--database",
            DATABASE,
        )
        run = run_measured(command, env, work / "logs" / f"ours-{batch}.log")
        contender.add(batch, landing.events(batch), [run])
        log(f"  ours      batch {batch}: {run.seconds:7.1f} s, {landing.events(batch):,} events")
    return contender


def run_streamer(
    conf: Settings, landing: Landing, work: Path, log: Callable[[str], None]
) -> Contender:
    available = streamer.find_bundle(conf)
    if available.jar is None:
        log(f"  HoodieStreamer: unavailable: {available.reason}")
        return Contender("streamer", status="unavailable", reason=available.reason)
    contender = Contender("streamer")
    root, env = fresh(work / "streamer"), process_env()
    tables = list(load_tables(database=DATABASE).values())
    props = {t.name: streamer.prepare(t, conf, root / "landing", root / "conf") for t in tables}
    for batch in range(landing.batches):
        stage(landing, batch, root / "landing", drop_tombstones=True)
        runs = []
        for table in tables:
            command = streamer.command(table, conf, available.jar, props[table.name], root / "lake")
            log_file = work / "logs" / f"streamer-{batch}-{table.name}.log"
            runs.append(run_measured(command, env, log_file))
        contender.add(batch, landing.events(batch), runs)
        log(f"  streamer  batch {batch}: {sum(r.seconds for r in runs):7.1f} s")
    return contender


def run_ceiling(landing: Landing, work: Path, log: Callable[[str], None]) -> Contender:
    contender = Contender("ceiling")
    root, env = fresh(work / "ceiling"), process_env()
    for batch in range(landing.batches):
        staged = stage(landing, batch, root / "landing")
        files = root / f"batch-{batch}.json"
        files.write_text(json.dumps(staged))
        command = python_module(
            "lakehouse.bench.ceiling", "--files", str(files), "--out", str(root / "parquet")
        )
        run = run_measured(command, env, work / "logs" / f"ceiling-{batch}.log")
        contender.add(batch, landing.events(batch), [run])
        log(f"  ceiling   batch {batch}: {run.seconds:7.1f} s")
    return contender


def verify(landing: Landing, work: Path, streamer_ran: bool) -> dict[str, Any]:
    args = [
        "--expected",
        str(landing.root / "_expected"),
        "--ours",
        str(work / "ours" / "lake" / DATABASE),
        "--ceiling",
        str(work / "ceiling" / "parquet"),
    ]
    if streamer_ran:
        args += ["--streamer", str(work / "streamer" / "lake" / DATABASE)]
    run = run_measured(
        python_module("lakehouse.bench.verify", *args), process_env(), work / "logs" / "verify.log"
    )
    return run.result


def _speed_ratio(ours: dict, peer: dict, phase: str) -> float | None:
    mine = ours.get(phase, {}).get("events_per_second")
    theirs = peer.get(phase, {}).get("events_per_second")
    return round(mine / theirs, 3) if mine and theirs else None


def figures(landing: Landing, contenders: list[Contender], state: dict, conf: Settings) -> dict:
    """Everything the run measured, with the ratios, the goals and the state check."""
    summaries = {c.name: c.summary() for c in contenders}
    ours, peer, ceiling = summaries["ours"], summaries["streamer"], summaries["ceiling"]
    change_events = sum(landing.events(b) for b in range(1, landing.batches))
    state_ok = bool(state.get("ours_matches_expected")) and state.get("streamer_matches_ours") in (
        True,
        None,
    )
    ceiling_complete = state.get("ceiling_rows") == landing.events(0) + change_events
    ratios = {
        "ours_vs_streamer": {p: _speed_ratio(ours, peer, p) for p in ("snapshot", "changes")},
        "ours_vs_ceiling": {p: _speed_ratio(ours, ceiling, p) for p in ("snapshot", "changes")},
    }
    if peer["status"] != "ran":
        ratios["ours_vs_streamer"]["void"] = f"HoodieStreamer {peer['status']}: {peer['reason']}"
    vs_peer = ratios["ours_vs_streamer"]
    return {
        "benchmark": "ingest",
        "scale": landing.manifest["options"]["scale"],
        "change_batches": landing.batches - 1,
        "format": landing.manifest["options"]["format"],
        "events": {"snapshot": landing.events(0), "changes": change_events},
        "machine": report.machine(),
        "spark": {
            "master": conf.spark_master,
            "driver_memory": conf.driver_memory,
            "shuffle_partitions": conf.shuffle_partitions,
            "hudi": streamer.hudi_version(conf),
        },
        "contenders": summaries,
        "ratios": ratios,
        "state": {**state, "ok": state_ok, "ceiling_wrote_every_event": ceiling_complete},
        "valid": state_ok and ceiling_complete,
        "goals": {
            "ours_at_least_streamer_speed": (
                None
                if vs_peer["snapshot"] is None or vs_peer["changes"] is None
                else vs_peer["snapshot"] >= 1 and vs_peer["changes"] >= 1
            ),
            "snapshot_within_2x_of_ceiling": (ratios["ours_vs_ceiling"]["snapshot"] or 0) >= 0.5,
            "peak_rss_within_24_gib": max(s.get("peak_rss_bytes", 0) for s in summaries.values())
            <= 24 * report.GIB,
        },
    }


def _contender_table(results: dict) -> str:
    """One row per contender: seconds and events/s per phase, wall time, peak memory."""
    rows = []
    for name, label in CONTENDERS.items():
        c = results["contenders"][name]
        if c["status"] != "ran":
            rows.append([label, *(["-"] * 6), f"{c['status']}: see below"])
            continue
        s, ch = c["snapshot"], c["changes"]
        rows.append(
            [
                label,
                report.number(s["seconds"], 1),
                report.number(s["events_per_second"]),
                report.number(ch["seconds"], 1),
                report.number(ch["events_per_second"]),
                report.number(c["wall_seconds"], 1),
                report.gib(c["peak_rss_bytes"]),
                "ran",
            ]
        )
    return report.markdown_table(
        [
            "contender",
            "snapshot s",
            "snapshot events/s",
            "changes s",
            "changes events/s",
            "wall s",
            "peak RSS",
            "status",
        ],
        rows,
    )


def markdown(results: dict) -> str:
    events = results["events"]
    table = _contender_table(results)
    ratios, state = results["ratios"], results["state"]
    machine = results["machine"]
    lines = [
        f"### bench ingest --scale {results['scale']} --change-batches {results['change_batches']}",
        "",
        f"{events['snapshot']:,} snapshot events, {events['changes']:,} change events "
        f"({results['format']} JSON); {machine['cpus']} CPUs, {machine['memory_gib']} GiB, "
        f"load average {results['load_average_before']:.1f} at start (shared machine); "
        f"Spark {results['spark']['master']}, driver {results['spark']['driver_memory']}, "
        f"Hudi {results['spark']['hudi']}. Seconds are process wall time (JVM start included).",
        "",
        table,
        "",
        f"- ours/DeltaStreamer (events/s): snapshot "
        f"{report.ratio(ratios['ours_vs_streamer']['snapshot'])}, changes "
        f"{report.ratio(ratios['ours_vs_streamer']['changes'])}",
        f"- ours/ceiling (events/s): snapshot {report.ratio(ratios['ours_vs_ceiling']['snapshot'])}"
        f", changes {report.ratio(ratios['ours_vs_ceiling']['changes'])}",
        f"- state: ours = generator's expected state: {_yes(state.get('ours_matches_expected'))}; "
        f"HoodieStreamer = ours: {_yes(state.get('streamer_matches_ours'))}; ceiling wrote "
        f"every event: {_yes(state.get('ceiling_wrote_every_event'))}",
    ]
    if "void" in ratios["ours_vs_streamer"]:
        lines.append(f"- ours/DeltaStreamer void: {ratios['ours_vs_streamer']['void']}")
    if not results["valid"]:
        lines.append("- **figures void: the final state check failed**")
    return "\n".join(lines)


def _yes(value: object) -> str:
    return {True: "yes", False: "NO", None: "not run"}.get(value, str(value))  # type: ignore[arg-type]


def run_ingest_bench(
    scale: float,
    change_batches: int,
    results_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Generate, run the three contenders, verify, report; return the results."""
    started = time.monotonic()
    load_before = report.machine()["load_average_1m"]
    conf = settings()
    work = conf.home / "bench" / "ingest"
    landing = _landing(work, scale, change_batches, log)
    fresh(work / "logs")
    log(f"{landing.events(0):,} snapshot events, {landing.batches - 1} change batch(es)")
    with catalog_running(conf, log):
        log("1/4 ours: lakehouse ingest into Hudi bronze")
        ours = run_ours(landing, work, log)
        log("2/4 HoodieStreamer into a separate Hudi table")
        peer = run_streamer(conf, landing, work, log)
        log("3/4 ceiling: plain Spark, JSON -> Parquet")
        ceiling = run_ceiling(landing, work, log)
        log("4/4 final state check")
        state = verify(landing, work, peer.status == "ran")
    results = figures(landing, [ours, peer, ceiling], state, conf)
    results["seconds"] = round(time.monotonic() - started, 1)
    results["load_average_before"] = load_before
    text = markdown(results)
    path = report.write(f"ingest-scale{scale:g}", results, text, results_dir)
    results["results_file"] = str(path)
    console.print(text, markup=False, soft_wrap=True)
    o = results["contenders"]["ours"]
    log(
        f"bench ingest done in {results['seconds']:.0f}s: ours snapshot "
        f"{report.number(o['snapshot']['events_per_second'])} ev/s, changes "
        f"{report.number(o['changes']['events_per_second'])} ev/s, "
        f"ours/ceiling {report.ratio(results['ratios']['ours_vs_ceiling']['snapshot'])}, "
        f"ours/DeltaStreamer {report.ratio(results['ratios']['ours_vs_streamer']['snapshot'])}, "
        f"state {'ok' if results['valid'] else 'WRONG (figures void)'}; {path}"
    )
    return results
