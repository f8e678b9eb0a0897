"""Scheduled jobs from conf/jobs.yml: `lakehouse jobs run NAME`.

The same definitions drive the Airflow DAGs in dags/, so a job behaves the
same from cron, Airflow or a terminal. One lock guards all jobs: two jobs
ingesting the same tables at once would race on the checkpoints.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ingestion.config import load_tables, select_tables
from ingestion.errors import UserError
from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse.dbt_wrapper import run_dbt
from lakehouse.output import console

STEP_KINDS = ("ingest", "dbt")
EXIT_FAILED = 1
EXIT_LOCKED = 4


class JobLockedError(UserError):
    """Another job holds the lock; this run did nothing."""


@dataclass(frozen=True)
class Step:
    name: str
    run: str
    args: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    select: str = ""


@dataclass(frozen=True)
class Job:
    name: str
    description: str
    schedule: str
    owner: str
    retries: int
    retry_delay_minutes: int
    steps: tuple[Step, ...]


@dataclass
class StepRecord:
    name: str
    status: str = "pending"
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    error: str = ""


@dataclass
class JobRecord:
    job: str
    started_at: str
    status: str = "running"
    seconds: float = 0.0
    steps: list[StepRecord] = field(default_factory=list)
    record: str = ""


def _step(path: Path, job: str, raw: dict[str, Any]) -> Step:
    if not isinstance(raw, dict) or raw.get("run") not in STEP_KINDS:
        raise UserError(f"{path}: job '{job}': each step needs run: one of {STEP_KINDS}")
    if raw.get("select", "touched") != "touched":
        raise UserError(f"{path}: job '{job}': select can only be 'touched'")
    return Step(
        name=str(raw.get("name", raw["run"])),
        run=raw["run"],
        args=tuple(str(a) for a in raw.get("args", [])),
        tables=tuple(raw.get("tables", [])),
        select=str(raw.get("select", "")),
    )


def load_jobs(path: Path | None = None) -> dict[str, Job]:
    """Every job of the jobs file, defaults applied; fails on the first malformed one."""
    path = path or settings().jobs_file
    document = yaml.safe_load(path.read_text()) or {}
    defaults = document.get("defaults", {})
    jobs = {}
    for name, raw in (document.get("jobs") or {}).items():
        merged = {**defaults, **raw}
        if not merged.get("steps"):
            raise UserError(f"{path}: job '{name}' has no steps")
        jobs[name] = Job(
            name=name,
            description=" ".join(str(merged.get("description", "")).split()),
            schedule=str(merged.get("schedule", "")),
            owner=str(merged.get("owner", "")),
            retries=int(merged.get("retries", 0)),
            retry_delay_minutes=int(merged.get("retry_delay_minutes", 5)),
            steps=tuple(_step(path, name, s) for s in merged["steps"]),
        )
    return jobs


def get_job(name: str, conf: Settings | None = None) -> Job:
    jobs = load_jobs((conf or settings()).jobs_file)
    if name not in jobs:
        raise UserError(f"unknown job '{name}'; known: {', '.join(jobs)}")
    return jobs[name]


@contextmanager
def job_lock(conf: Settings, job: str) -> Iterator[None]:
    """Hold the jobs lock for this process; refuse at once when another run has it.

    flock, not a pid file: the kernel drops it when the holder dies, so a
    killed run never leaves a stale lock behind.
    """
    conf.run_dir.mkdir(parents=True, exist_ok=True)
    path = conf.run_dir / "jobs.lock"
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise JobLockedError(
                f"another job is running ({handle.read().strip() or 'unknown'}); "
                f"this run of '{job}' did nothing"
            ) from None
        handle.truncate(0)
        handle.write(f"job {job}, pid {os.getpid()}, since {datetime.now(UTC):%H:%M:%S}Z\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


def dbt_source_tables() -> set[str]:
    """The bronze tables the dbt project declares as sources (any source name)."""
    names = set()
    for path in (PROJECT_DIR / "models").rglob("_*__sources.yml"):
        for source in (yaml.safe_load(path.read_text()) or {}).get("sources", []):
            names |= {f"{source['name']}.{t['name']}" for t in source.get("tables", [])}
    return names


def touched_selector(touched: list[str]) -> list[str]:
    """dbt selectors for everything downstream of the bronze tables that changed.

    A table's changelog is committed with it, so its source counts as touched too.
    """
    tables = set(touched) | {f"{t}_changelog" for t in touched}
    wanted = [s for s in sorted(dbt_source_tables()) if s.split(".", 1)[1] in tables]
    return [f"source:{s}+" for s in wanted]


class JobRunner:
    """Runs one job's steps in order, stopping at the first failure."""

    def __init__(self, job: Job, conf: Settings, log: Callable[[str], None], spark=None):
        self.job = job
        self.conf = conf
        self.log = log
        self._spark = spark
        self.touched: list[str] = []

    def spark(self):
        """The Spark session, built only when an ingest step needs it."""
        if self._spark is None:
            from ingestion.spark import build_session

            self._spark = build_session(f"lakehouse-job-{self.job.name}", self.conf)
        return self._spark

    def ingest(self, step: Step, record: StepRecord) -> None:
        from ingestion.engine import ingest
        from lakehouse.ingest_command import summary_table

        tables = select_tables(load_tables(), list(step.tables) or None)
        results = ingest(self.spark(), self.conf, tables, self.log).tables
        console.print(summary_table(results))
        self.touched = [r.table for r in results if r.committed]
        record.detail = {
            r.table: {
                "files": r.files,
                "events": sum(r.events.values()),
                "upserted": r.upserted,
                "deleted": r.deleted,
                "quarantined": r.quarantined,
            }
            for r in results
        }
        quarantined = sum(r.quarantined for r in results)
        if quarantined:
            # Quarantined rows are kept with their reason; the rest is applied.
            record.detail["warning"] = f"{quarantined} record(s) quarantined"

    def dbt(self, step: Step, record: StepRecord) -> None:
        args = list(step.args)
        if step.select == "touched":
            selectors = touched_selector(self.touched)
            if not selectors:
                record.status = "skipped"
                record.detail = {"reason": "no new data in any dbt source"}
                return
            args += ["--select", " ".join(selectors)]
        record.detail["command"] = "dbt " + " ".join(args)
        started = time.time()
        result = run_dbt(args, self.conf, target="local")
        record.detail |= _dbt_results(self.conf.dbt_target_path, args[0], since=started)
        if result.returncode != 0:
            raise RuntimeError(f"dbt exited with {result.returncode}")

    def run_step(self, step: Step) -> StepRecord:
        record = StepRecord(step.name, status="running")
        started = time.monotonic()
        self.log(f"[{self.job.name}] {step.name} ({step.run}) ...")
        try:
            getattr(self, step.run)(step, record)
            if record.status == "running":
                record.status = "success"
        except Exception as error:  # recorded, reported and notified, never swallowed
            record.status = "failed"
            record.error = f"{type(error).__name__}: {error}"
        record.seconds = round(time.monotonic() - started, 1)
        self.log(f"[{self.job.name}] {step.name}: {record.status} in {record.seconds}s")
        return record


def _dbt_results(target: Path, command: str, since: float) -> dict[str, Any]:
    """Node counts by status from the run results this dbt command wrote (if any)."""
    path = target / ("sources.json" if command == "source" else "run_results.json")
    if not path.exists() or path.stat().st_mtime < since:
        return {}
    results = json.loads(path.read_text()).get("results", [])
    return {
        "nodes": len(results),
        "statuses": dict(Counter(r["status"] for r in results)),
        "kinds": dict(Counter(r["unique_id"].split(".")[0] for r in results)),
    }


def notify(conf: Settings, record: JobRecord, path: Path, log: Callable[[str], None]) -> None:
    """Tell someone a job failed: the configured command and/or webhook."""
    if conf.notify_command:
        env = {
            **os.environ,
            "LAKEHOUSE_JOB": record.job,
            "LAKEHOUSE_JOB_STATUS": record.status,
            "LAKEHOUSE_JOB_RECORD": str(path),
        }
        done = subprocess.run(conf.notify_command, shell=True, env=env, check=False)
        log(f"notified: command exited {done.returncode}")
    if conf.notify_url:
        request = urllib.request.Request(
            conf.notify_url,
            data=path.read_bytes(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                log(f"notified: webhook answered {response.status}")
        except OSError as error:
            log(f"notification webhook failed: {error}")


def run_job(
    name: str,
    conf: Settings | None = None,
    log: Callable[[str], None] = print,
    spark=None,
) -> JobRecord:
    """Run a job under the lock; write its run record; notify on failure."""
    conf = conf or settings()
    job = get_job(name, conf)
    started = time.monotonic()
    now = datetime.now(UTC)
    record = JobRecord(job=name, started_at=now.isoformat(timespec="seconds"))
    path = conf.home / "runs" / f"job-{name}-{now:%Y%m%dT%H%M%S%f}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with job_lock(conf, name):
        runner = JobRunner(job, conf, log, spark)
        for step in job.steps:
            step_record = runner.run_step(step)
            record.steps.append(step_record)
            if step_record.status == "failed":
                break
        failed = any(s.status == "failed" for s in record.steps)
        record.status = "failed" if failed else "success"
        record.seconds = round(time.monotonic() - started, 1)
        record.record = str(path)
        path.write_text(json.dumps(asdict(record), indent=2))
        if failed:
            notify(conf, record, path, log)
    log(
        f"job {name}: {record.status} in {record.seconds:.0f}s, "
        + ", ".join(f"{s.name} {s.status}" for s in record.steps)
        + f"; run record {path}"
    )
    return record
