"""`lakehouse bench soak`: the continuous service and every user of the Thrift server, for hours.

What a lake that runs all day does to its long-running processes
(docs/decisions/0014-thrift-server-stays-up.md): the continuous service
applies a steady change rate (`bench latency`'s writer and prober, database
`bench_soak`); a dashboard-like client opens a new session for each query;
in turns every `--job-minutes / 2`, the hourly job's `dbt build` over the
soak's bronze, and a second process ingesting the next change batch of a
second bronze database, then a query of it. Every second the monitor reads
each long-running process's RSS and its JVM's heap (soak_users.py). At the
end the backlog is drained, the service stopped by SIGTERM, and both bronze
databases checked key by key against the generator's expected state; the
figures per window, their trends and the goals (soak_figures.py), a PNG drawn
from the results JSON (chart.py).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse import stack, thrift_client
from lakehouse.bench import chart, report, soak_figures
from lakehouse.bench.contenders import fresh, process_env, python_module, thrift_running
from lakehouse.bench.latency import (
    SNAPSHOT_DEADLINE,
    Prober,
    caught_up_after,
    generate_changes,
    publish,
    start_service,
    stop_service,
    stream_and_drain,
    verify,
    visible_from_file,
    wait_health,
)
from lakehouse.bench.measure import run_measured
from lakehouse.bench.soak_users import Jobs, Monitor, SessionClient
from lakehouse.bench.staging import Landing, reuse_or_generate, stage
from lakehouse.dbt_wrapper import dbt_env, dbt_executable
from lakehouse.scheduler.jobs_file import build_args, get_job

DATABASE = "bench_soak"
SECOND_DATABASE = "bench_soak_second"
DBT_SCHEMA, MARTS_SCHEMA = "bench_soak", "bench_soak_marts"
SECOND_SCALE = 0.01  # the second database: small, as an ingest of another source is


@dataclass(frozen=True)
class SoakOptions:
    """What `lakehouse bench soak` was asked for."""

    scale: float
    rate: int
    minutes: float
    job_minutes: float  # one dbt build and one second ingest in each
    session_seconds: float  # the dashboard-like client's pace
    dbt_select: str | None = None  # default: the whole project, as the hourly job after a busy hour


class SecondIngest:
    """A second process ingesting another bronze database, one change batch a turn."""

    def __init__(self, conf: Settings, landing: Landing, work: Path) -> None:
        self.conf, self.landing, self.work = conf, landing, work
        self.batch = 0
        self.env = {
            **process_env(),
            "LAKEHOUSE_LANDING": str(work / "landing"),
            "LAKEHOUSE_LAKE": str(work / "lake"),
            "LAKEHOUSE_BRONZE_DATABASE": SECOND_DATABASE,
        }

    def _ingest(self) -> int:
        command = python_module("lakehouse.cli", "ingest")
        log = self.work / "logs" / f"ingest-{self.batch}.log"
        return run_measured(command, self.env, log, check=False).returncode

    def __call__(self) -> dict[str, Any]:
        """Stage the next batch, ingest it, then ask the Thrift server about the database."""
        if self.batch < self.landing.batches:
            stage(self.landing, self.batch, self.work / "landing")
            self.batch += 1
        returncode = self._ingest()
        try:
            thrift_client.execute(f"select count(*) from {SECOND_DATABASE}.sales", self.conf)
        except thrift_client.ThriftUnreachable:
            return {"returncode": returncode or 1}
        except thrift_client.QueryFailed:
            return {"returncode": returncode or 2}
        return {"returncode": returncode}

    def finish(self) -> int:
        """The batches not yet staged, in one last ingest: the state check's input is complete."""
        while self.batch < self.landing.batches:
            stage(self.landing, self.batch, self.work / "landing")
            self.batch += 1
        return self._ingest()


def dbt_job(conf: Settings, work: Path, select: str | None) -> Callable[[], dict[str, Any]]:
    """The hourly job's `dbt build` over the soak's bronze, in one target path as the jobs keep."""
    names = {"bronze_database": DATABASE, "dbt_schema": DBT_SCHEMA, "marts_schema": MARTS_SCHEMA}
    env = dbt_env(dataclasses.replace(conf, **names))
    env["DBT_TARGET_PATH"] = str(work / "dbt-target")
    args = [*build_args(get_job("hourly", conf)), *(["--select", select] if select else [])]
    turns = itertools.count(1)

    def build() -> dict[str, Any]:
        log = work / "logs" / f"dbt-{next(turns)}.log"
        command = [dbt_executable(), "build", *args]
        run = run_measured(command, env, log, cwd=PROJECT_DIR, check=False)
        return {"returncode": run.returncode, "peak_rss_bytes": run.peak_rss_bytes}

    return build


def prepare(conf: Settings, options: SoakOptions, log) -> tuple[Path, Landing, Landing]:
    """Fresh work folders and the two generated landing zones."""
    work = conf.home / "bench" / "soak"
    for folder in ("landing", "lake", "logs", "second/landing", "second/lake", "second/logs"):
        fresh(work / folder)
    events = int(options.rate * options.minutes * 60 / 1.15)  # deletes add a tombstone each
    log(f"TICKIT CDC, scale {options.scale:g}, about {events:,} change events (reused if made)")
    landing = generate_changes(work / "source", options.scale, events)
    streamed = sum(landing.events(batch) for batch in range(1, landing.batches))
    log(f"the stream: {streamed:,} change events, {landing.batches - 1} batches")
    turns = math.ceil(options.minutes / options.job_minutes) + 1
    second = reuse_or_generate(work / "second-source", SECOND_SCALE, turns, log, faults=False)
    return work, landing, second


def _soak(conf: Settings, options: SoakOptions, work: Path, landing: Landing, second: SecondIngest,
          processes: dict[str, int], log) -> dict[str, Any]:  # fmt: skip
    """The service under the writer, with every user; its records once drained and stopped."""
    health = work / "health.json"
    stage(landing, 0, work / "landing")
    service = start_service(work, health, {"LAKEHOUSE_BRONZE_DATABASE": DATABASE})
    log(f"snapshot: {landing.events(0):,} events, waiting for the service to apply it")
    wait_health(health, service, caught_up_after(""), SNAPSHOT_DEADLINE)
    log(f"soak: {options.rate} events/s for about {options.minutes:g} min, with every user")
    started = time.monotonic()
    jobs = [("dbt build", dbt_job(conf, work, options.dbt_select)), ("second ingest", second)]
    query = f"select count(*) from {DATABASE}.sales"
    prober = Prober(conf, functools.partial(visible_from_file, database=DATABASE))
    with (
        Monitor({**processes, "service": service.pid}, health, started, log) as monitor,
        SessionClient(conf, options.session_seconds, query, started) as sessions,
        Jobs(jobs, options.job_minutes * 30, started) as scheduled,
        prober,
    ):
        streamed = stream_and_drain(work, landing, service, prober, options.rate)
        monitor.histogram("late")
    returncode = stop_service(service)
    log(
        f"landed {streamed['records']:,} records in {streamed['seconds']:.0f} s; "
        f"service exit {returncode}"
    )
    return {
        "soak_seconds": round(time.monotonic() - started, 1),
        "service_exit": returncode,
        "records": streamed["records"],
        "per_minute": monitor.minutes,
        "batches": monitor.batches,
        "sessions": sessions.sessions,
        "latencies": [
            (round(at - started, 2), round(s, 2))
            for at, s in zip(prober.landed_at, prober.latencies, strict=True)
        ],
        "unseen": prober.unseen + prober.outstanding(),
        "jobs": scheduled.records,
        "thrift_histograms": monitor.histograms,
    }


def final_state(conf: Settings, landing: Landing, work: Path, second: SecondIngest, log) -> dict:
    """Both bronze databases key by key, and a new session answering at the end."""
    log("final state check: the second database's last batches, then both databases")
    second_exit = second.finish()
    ours = verify(landing, work, DATABASE)
    other = verify(second.landing, work / "second", SECOND_DATABASE)
    begun = time.monotonic()
    with thrift_client.Connection(conf, timeout=conf.thrift_health_timeout_seconds) as connection:
        answered = connection.execute("select 1").rows == [(1,)]
    exact = bool(
        ours["ours_matches_expected"] and other["ours_matches_expected"] and second_exit == 0
    )
    summary = (
        f"{DATABASE} {'exact' if ours['ours_matches_expected'] else 'WRONG'}, {SECOND_DATABASE} "
        f"{'exact' if other['ours_matches_expected'] else 'WRONG'}; a new session's select 1 "
        f"{'answered' if answered else 'NOT answered'} in {time.monotonic() - begun:.2f} s"
    )
    return {"exact": exact and answered, "summary": summary, DATABASE: ours, SECOND_DATABASE: other}


def figures(options: SoakOptions, soaked: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """The results JSON: options, records, windows, trends, goals."""
    seconds = soaked["soak_seconds"]
    kinds = sorted({j["kind"] for j in soaked["jobs"]})
    summary = ", ".join(f"{sum(1 for j in soaked['jobs'] if j['kind'] == k)} x {k}" for k in kinds)
    results: dict[str, Any] = {
        "benchmark": "soak",
        **dataclasses.asdict(options),
        "machine": report.machine(),
        "jobs_summary": summary or "no job turn",
        **soaked,
        "state": state,
        "windows": soak_figures.windows(soaked, seconds),
        "trends": soak_figures.trends(soaked, seconds),
    }
    results["goals"] = soak_figures.goals(results)
    results["valid"] = results["goals"]["final_state_exact"] and soaked["service_exit"] == 0
    results["per_minute"] = [dataclasses.asdict(m) for m in soaked["per_minute"]]
    return results


def run_soak_bench(options: SoakOptions, results_dir: Path | None = None, log=print) -> dict:
    """Generate, soak with every user, check the final state, report and draw."""
    started = time.monotonic()
    load_before = report.machine()["load_average_1m"]
    conf = settings()
    work, landing, generated = prepare(conf, options, log)
    second = SecondIngest(conf, generated, work / "second")
    with thrift_running(conf, log) as thrift_pid:
        processes = {"thrift": thrift_pid}
        catalog = next((s for s in stack.services(conf) if s.name == "catalog"), None)
        if catalog is not None and (pid := stack.running_pid(catalog, conf)):
            processes["catalog"] = pid
        soaked = _soak(conf, options, work, landing, second, processes, log)
        state = final_state(conf, landing, work, second, log)
    results = figures(options, soaked, state)
    path = publish(
        results,
        soak_figures.markdown,
        f"soak-scale{options.scale:g}",
        started,
        load_before,
        results_dir,
    )
    picture = chart.draw(path)
    met = sum(results["goals"].values())
    log(
        f"bench soak done in {results['seconds']:.0f}s: "
        f"{met} of {len(results['goals'])} goals met, "
        f"state {'exact' if results['valid'] else 'WRONG (figures void)'}; {path}, {picture}"
    )
    return results
