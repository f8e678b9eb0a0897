"""`lakehouse bench ingest`: ours vs Delta Lake, Iceberg and Hudi's own writer, on the same CDC.

One run generates TICKIT CDC (unwrapped JSON), then each contender (ours, the
peers of `peers.PEERS`, HoodieStreamer when its bundle exists, the plain-Spark
ceiling) applies the snapshot and then each change batch, every phase in its
own measured process, on its own copy of the landing zone, with the same Spark
settings. Then each contender's tables are read (timed) and checked key by key
against the generator's expected state, in a process of their own; a
contender whose state differs is void, with the difference.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ingestion.config import load_tables
from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from lakehouse.bench import chart, report, streamer
from lakehouse.bench.contenders import catalog_running, fresh, process_env, python_module
from lakehouse.bench.ingest_report import markdown, summary_line
from lakehouse.bench.ingest_results import (
    Contender,
    IngestBenchResults,
    Phase,
    Ratio,
    StateCheck,
)
from lakehouse.bench.measure import ContenderFailed, run_measured
from lakehouse.bench.peers import PEERS, Peer, bench_jars_dir
from lakehouse.bench.staging import Landing, reuse_or_generate, stage
from lakehouse.output import console

DATABASE = "bench_bronze"
LABELS = {
    "ours": "ours (lakehouse ingest)",
    "streamer": "HoodieStreamer (DeltaStreamer)",
    "ceiling": "ceiling: plain Spark JSON -> Parquet",
}
PEER_NAMES = (*(peer.name for peer in PEERS), "streamer")
LEFT_OUT = "left out"


def chosen_peers(text: str) -> frozenset[str]:
    """`--peers`: all, none, or a comma-separated list of PEER_NAMES.

    Ours and the plain-Spark ceiling always run: every ratio is ours over a
    contender, and the ceiling's is the one a run without peers still gives.
    """
    if text == "all":
        return frozenset(PEER_NAMES)
    if text == "none":
        return frozenset()
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(names - set(PEER_NAMES))
    if unknown or not names:
        raise UserError(
            f"--peers {text}: unknown peer(s) {', '.join(unknown) or '(none given)'}; "
            f"give all, none or a comma-separated list of {', '.join(PEER_NAMES)}"
        )
    return names


def left_out(name: str, label: str) -> Contender:
    return Contender(name, label, LEFT_OUT, "not chosen with --peers")


@dataclass(frozen=True)
class Plan:
    """How one contender runs: its folder and the processes of each phase."""

    contender: Contender
    root: Path  # landing in root/landing, whatever it writes in root/lake
    commands: Callable[[int, Path], list[list[str]]]  # batch, staged-files JSON -> processes
    drop_tombstones: bool = False
    maintenance: list[str] | None = None  # the process run after the last batch, if any


def lake_files(root: Path) -> dict[str, int]:
    """Every file under `root` and its size."""
    return (
        {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file()} if root.exists() else {}
    )


def written(before: dict[str, int], after: dict[str, int]) -> tuple[int, int]:
    """Files a phase wrote (new ones) and the bytes it added (new files plus appends)."""
    new = [path for path in after if path not in before]
    grown = sum(max(0, size - before[path]) for path, size in after.items() if path in before)
    return len(new), sum(after[path] for path in new) + grown


def run_phase(plan: Plan, landing: Landing, batch: int, work: Path) -> Phase:
    """Stage the batch's files for the contender, run its processes, measure them."""
    name = plan.contender.name
    staged = stage(landing, batch, plan.root / "landing", drop_tombstones=plan.drop_tombstones)
    files = plan.root / f"batch-{batch}.json"
    files.write_text(json.dumps(staged))
    before = lake_files(plan.root / "lake")
    runs = [
        run_measured(command, process_env(), work / "logs" / f"{name}-{batch}-{i}.log")
        for i, command in enumerate(plan.commands(batch, files))
    ]
    return Phase.of(
        batch, landing.events(batch), runs, written(before, lake_files(plan.root / "lake"))
    )


def run_contender(plan: Plan, landing: Landing, work: Path, log: Callable[[str], None]) -> None:
    """Every phase in turn; a failing peer is void (with its log); ours failing stops the run."""
    contender = plan.contender
    for batch in range(landing.batches):
        try:
            phase = run_phase(plan, landing, batch, work)
        except ContenderFailed as failed:
            if contender.name == "ours":
                raise
            contender.status = "void"
            contender.reason = f"batch {batch} failed: {str(failed).splitlines()[0]}"
            log(f"  {contender.name:<12} {contender.reason}")
            return
        contender.phases.append(phase)
        log(
            f"  {contender.name:<12} batch {batch}: {phase.seconds:7.1f} s, "
            f"{phase.events:,} events, {phase.files_written:,} files written"
        )


def ours_plan(work: Path) -> Plan:
    """Ours: `lakehouse ingest` per phase; `lakehouse maintain` after them."""
    root = fresh(work / "ours")
    args = ["--landing", str(root / "landing"), "--lake", str(root / "lake")]
    command = python_module("lakehouse.bench.ours", *args, "--database", DATABASE)
    maintenance = [*command, "--maintain"]
    return Plan(
        Contender("ours", LABELS["ours"]), root, lambda batch, files: [command], False, maintenance
    )


def maintain_and_check(plan: Plan, check: Callable[[Plan], None], work: Path) -> None:
    """Ours' maintenance after its batches, measured apart; its reads before and after it."""
    contender = plan.contender
    if plan.maintenance is None or not contender.ran:
        return
    contender.state_before_maintenance = contender.state
    before = lake_files(plan.root / "lake")
    run = run_measured(plan.maintenance, process_env(), work / "logs" / "ours-maintain.log")
    written_now = written(before, lake_files(plan.root / "lake"))
    contender.maintenance = Phase.of(-1, 0, [run], written_now)
    check(plan)


def peer_plan(peer: Peer, work: Path) -> Plan:
    root = fresh(work / peer.name)

    def commands(batch: int, files: Path) -> list[list[str]]:
        args = ["--peer", peer.name, "--files", str(files), "--lake", str(root / "lake")]
        return [python_module("lakehouse.bench.peer_apply", *args, "--database", DATABASE)]

    return Plan(Contender(peer.name, peer.label), root, commands)


def ceiling_plan(work: Path) -> Plan:
    root = fresh(work / "ceiling")

    def commands(batch: int, files: Path) -> list[list[str]]:
        args = ["--files", str(files), "--out", str(root / "lake")]
        return [python_module("lakehouse.bench.ceiling", *args)]

    return Plan(Contender("ceiling", LABELS["ceiling"]), root, commands)


def streamer_plan(conf: Settings, work: Path) -> Plan | Contender:
    """HoodieStreamer, one spark-submit per table and phase; unavailable without its bundle."""
    available = streamer.find_bundle(conf)
    if available.jar is None:
        return Contender("streamer", LABELS["streamer"], "unavailable", available.reason)
    root, bundle = fresh(work / "streamer"), available.jar
    tables = list(load_tables(database=DATABASE).values())
    props = {t.name: streamer.prepare(t, conf, root / "landing", root / "conf") for t in tables}

    def commands(batch: int, files: Path) -> list[list[str]]:
        return [streamer.command(t, conf, bundle, props[t.name], root / "lake") for t in tables]

    return Plan(Contender("streamer", LABELS["streamer"]), root, commands, drop_tombstones=True)


def check_state(
    contender: Contender,
    engine: str,
    root: Path,
    landing: Landing,
    work: Path,
    ceiling: Path | None,
) -> None:
    """The contender's reads and final state, in a process with its engine's session."""
    if not contender.phases:
        return
    args = ["--engine", engine, "--lake", str(root / "lake"), "--database", DATABASE]
    args += ["--expected", str(landing.root / "_expected")]
    if ceiling is not None:
        args += ["--ceiling", str(ceiling / "lake")]
    if contender.name == "ours":
        args.append("--floor-reads")
    log = work / "logs" / f"verify-{contender.name}.log"
    try:
        run = run_measured(python_module("lakehouse.bench.verify", *args), process_env(), log)
    except ContenderFailed as failed:
        if contender.name == "ours":
            raise
        contender.status, contender.reason = "void", f"state check failed: {failed}".split("\n")[0]
        return
    contender.checked(StateCheck.from_result(run.result))


def check_ceiling(ceiling: Contender, ours: Contender, landing: Landing) -> None:
    """The ceiling has no current state; it must have written every event."""
    events = sum(landing.events(b) for b in range(landing.batches))
    rows = ours.state.ceiling_rows if ours.state else None
    if rows != events:
        ceiling.status, ceiling.reason = "void", f"wrote {rows} rows for {events} events"


def _over(mine: float | None, theirs: float | None) -> float | None:
    return round(mine / theirs, 3) if mine and theirs else None


def ratio(ours: Contender, peer: Contender) -> Ratio:
    """Ours over one peer, void unless both ran and both states are right."""
    if not (ours.ran and peer.ran):
        why = f"{peer.label} {peer.status}: {peer.reason}" if not peer.ran else "ours void"
        return Ratio(None, None, None, None, void=why)
    return Ratio(
        snapshot=_over(ours.snapshot.events_per_second, peer.snapshot.events_per_second),
        changes=_over(ours.changes.events_per_second, peer.changes.events_per_second),
        read=_over(
            peer.state.read_seconds if peer.state else None,
            ours.state.read_seconds if ours.state else None,
        ),
        peak_rss=_over(ours.peak_rss_bytes, peer.peak_rss_bytes),
        # Only when ours ran maintenance: at a tiny scale the rounded rates can tie.
        changes_maintained=_over(
            ours.changes_maintained_events_per_second, peer.changes.events_per_second
        )
        if ours.maintenance is not None
        else None,
    )


def goals(ours: Contender, peers: list[Contender]) -> dict[str, bool | None]:
    """The issue's goals against the best valid peer (by change-batch events/s)."""
    valid = [p for p in peers if p.ran and p.changes.events_per_second]
    if not ours.ran or not valid:
        return {
            "changes_1_5x_best_peer": None,
            "snapshot_1x_best_peer": None,
            "peak_rss_at_most_best_peer": None,
        }
    best = max(valid, key=lambda p: p.changes.events_per_second or 0)
    fastest = max(p.snapshot.events_per_second or 0 for p in valid)
    return {
        "best_peer": best.name,  # type: ignore[dict-item]
        # With ours' maintenance amortized over the batches: the honest comparison.
        "changes_1_5x_best_peer": (ours.changes_maintained_events_per_second or 0)
        >= 1.5 * (best.changes.events_per_second or 0),
        "snapshot_1x_best_peer": (ours.snapshot.events_per_second or 0) >= fastest,
        "peak_rss_at_most_best_peer": ours.peak_rss_bytes <= best.peak_rss_bytes,
    }


def results_of(landing: Landing, contenders: list[Contender], conf: Settings) -> IngestBenchResults:
    """Everything the run measured, with the ratios and the goals."""
    ours = contenders[0]
    peers = [c for c in contenders if c.name in {p.name for p in PEERS}]
    options = landing.manifest["options"]
    return IngestBenchResults(
        scale=options["scale"],
        change_batches=landing.batches - 1,
        format=options["format"],
        events={
            "snapshot": landing.events(0),
            "changes": sum(landing.events(b) for b in range(1, landing.batches)),
        },
        machine=report.machine(),
        spark={
            "master": conf.spark_master,
            "driver_memory": conf.driver_memory,
            "shuffle_partitions": conf.shuffle_partitions,
            "parallel_tables": conf.parallel_tables,
            "hudi": streamer.hudi_version(conf),
            "bench_jars": sorted(j.name for j in bench_jars_dir(conf).glob("*.jar")),
        },
        contenders=contenders,
        ratios={
            c.name: ratio(ours, c) for c in contenders if c.name != "ours" and c.status != LEFT_OUT
        },
        goals=goals(ours, peers),
        valid=ours.ran,
    )


def each(jobs: int, work: Callable[[Plan], None], plans: Iterable[Plan]) -> None:
    """`work` on every plan, `jobs` at a time; the first failure is raised."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done in [pool.submit(work, plan) for plan in plans]:
            done.result()


def run_all(
    conf: Settings,
    landing: Landing,
    work: Path,
    log: Callable[[str], None],
    jobs: int = 1,
    peers: frozenset[str] = frozenset(PEER_NAMES),
) -> list[Contender]:
    """Each contender over every phase, then each one's reads and state check.

    With `jobs` > 1 contenders run side by side: their figures are no longer
    comparable (they share the cores), which only a smoke run can afford.
    Peers not in `peers` are listed as left out.
    """
    plans = [ours_plan(work), *(peer_plan(p, work) for p in PEERS if p.name in peers)]
    engines = {"ours": "hudi", **{p.name: p.engine for p in PEERS}}
    ceiling = ceiling_plan(work)
    streamer_run = (
        streamer_plan(conf, work)
        if "streamer" in peers
        else left_out("streamer", LABELS["streamer"])
    )
    if isinstance(streamer_run, Plan):
        plans.append(streamer_run)
        engines["streamer"] = "hudi"
    plans.append(ceiling)
    steps = {plan.contender.name: step for step, plan in enumerate(plans, 1)}

    def apply(plan: Plan) -> None:
        log(f"{steps[plan.contender.name]}/{len(plans) + 1} {plan.contender.label}")
        run_contender(plan, landing, work, log)

    def check(plan: Plan) -> None:
        ceiling_root = ceiling.root if plan.contender.name == "ours" else None
        engine = engines[plan.contender.name]
        check_state(plan.contender, engine, plan.root, landing, work, ceiling_root)

    each(jobs, apply, plans)
    log(f"{len(plans) + 1}/{len(plans) + 1} reads and final state, one process per contender")
    each(jobs, check, [plan for plan in plans if plan.contender.name in engines])
    maintain_and_check(plans[0], check, work)
    check_ceiling(ceiling.contender, plans[0].contender, landing)
    by_name = {p.name: left_out(p.name, p.label) for p in PEERS}
    by_name |= {plan.contender.name: plan.contender for plan in plans}
    if not isinstance(streamer_run, Plan):
        by_name["streamer"] = streamer_run
    return [by_name[name] for name in ("ours", *PEER_NAMES, "ceiling")]


def run_ingest_bench(
    scale: float,
    change_batches: int,
    results_dir: Path | None = None,
    log: Callable[[str], None] = print,
    jobs: int = 1,
    peers: frozenset[str] = frozenset(PEER_NAMES),
) -> IngestBenchResults:
    """Generate, run the contenders, check each final state, report; return the results."""
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: give the number of contenders to run at once, 1 or more")
    started = time.monotonic()
    load_before = report.machine()["load_average_1m"]
    conf = settings()
    work = conf.home / "bench" / "ingest"
    landing = reuse_or_generate(work / "source", scale, change_batches, log)
    fresh(work / "logs")
    log(f"{landing.events(0):,} snapshot events, {landing.batches - 1} change batch(es)")
    with catalog_running(conf, log):
        contenders = run_all(conf, landing, work, log, jobs, peers)
    results = results_of(landing, contenders, conf)
    results.jobs = jobs
    results.seconds = round(time.monotonic() - started, 1)
    results.load_average_before = load_before
    results.load_average_after = report.machine()["load_average_1m"]
    text = markdown(results)
    path = report.write(f"ingest-scale{scale:g}", results.to_json(), text, results_dir)
    results.results_file = str(path)
    console.print(text, markup=False, soft_wrap=True)
    log(f"chart: {chart.draw(path)}")
    log(summary_line(results))
    return results
