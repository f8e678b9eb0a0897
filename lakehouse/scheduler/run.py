"""`lakehouse jobs run NAME`: one job from conf/jobs.yml, under the lock, with a run record.

The same definitions drive the Airflow DAGs in dags/, so a job behaves the
same from cron, Airflow or a terminal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingestion.settings import Settings, settings
from lakehouse.scheduler.jobs_file import get_job
from lakehouse.scheduler.lock import job_lock
from lakehouse.scheduler.records import JobRecord, notify, write_record
from lakehouse.scheduler.steps import Ingestor, JobRunner

EXIT_FAILED = 1
EXIT_LOCKED = 4


def record_path(conf: Settings, name: str, now: datetime) -> Path:
    return conf.home / "runs" / f"job-{name}-{now:%Y%m%dT%H%M%S%f}.json"


def _run_steps(runner: JobRunner, record: JobRecord) -> None:
    """Each step in order, up to and including the first that fails."""
    for step in runner.job.steps:
        step_record = runner.run_step(step)
        record.steps.append(step_record)
        if step_record.status == "failed":
            break


def run_job(
    name: str,
    conf: Settings | None = None,
    log: Callable[[str], None] = print,
    spark: Any = None,
    ingestor: Ingestor | None = None,
) -> JobRecord:
    """Run a job under the lock; write its run record; notify on failure."""
    conf = conf or settings()
    job = get_job(name, conf)
    started = time.monotonic()
    now = datetime.now(UTC)
    record = JobRecord(job=name, started_at=now.isoformat(timespec="seconds"))
    path = record_path(conf, name, now)
    path.parent.mkdir(parents=True, exist_ok=True)
    with job_lock(conf, name):
        _run_steps(JobRunner(job, conf, log, spark, ingestor), record)
        failed = any(s.status == "failed" for s in record.steps)
        record.status = "failed" if failed else "success"
        record.seconds = round(time.monotonic() - started, 1)
        record.record = str(path)
        write_record(path, record)
        if failed:
            notify(conf, record, path, log)
    log(
        f"job {name}: {record.status} in {record.seconds:.0f}s, "
        + ", ".join(f"{s.name} {s.status}" for s in record.steps)
        + f"; run record {path}"
    )
    return record
