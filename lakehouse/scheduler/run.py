"""`lakehouse jobs run NAME`: one job from conf/jobs.yml, under the lock, with a run record.

The same definitions drive the Airflow DAGs in dags/, so a job behaves the
same from cron, Airflow or a terminal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingestion.settings import Settings, settings
from lakehouse.errors_text import error_text
from lakehouse.scheduler.jobs_file import get_job
from lakehouse.scheduler.lock import JobLockedError, job_lock
from lakehouse.scheduler.records import JobRecord, notify, write_record
from lakehouse.scheduler.steps import Ingestor, JobRunner

EXIT_FAILED = 1
EXIT_LOCKED = 4


def record_path(conf: Settings, name: str, now: datetime) -> Path:
    # A name asked for on the command line may be no job's (and hold a slash).
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return conf.home / "runs" / f"job-{safe}-{now:%Y%m%dT%H%M%S%f}.json"


def _run_steps(runner: JobRunner, record: JobRecord) -> None:
    """Each step in order, up to and including the first that fails."""
    for step in runner.job.steps:
        step_record = runner.run_step(step)
        record.steps.append(step_record)
        if step_record.status == "failed":
            break


def _finish(
    conf: Settings, record: JobRecord, path: Path, started: float, log: Callable[[str], None]
) -> None:
    """Status and seconds; the record written; the failure notified."""
    failed_step = next((s for s in record.steps if s.status == "failed"), None)
    if failed_step is not None and not record.error:
        record.error = f"step {failed_step.name}: {failed_step.error}"
    failed = bool(record.error)
    record.status = "failed" if failed else "success"
    record.seconds = round(time.monotonic() - started, 1)
    record.record = str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_record(path, record)
    if failed:
        notify(conf, record, path, log)


def run_job(
    name: str,
    conf: Settings | None = None,
    log: Callable[[str], None] = print,
    spark: Any = None,
    ingestor: Ingestor | None = None,
) -> JobRecord:
    """Run a job under the lock; write its run record; notify on failure.

    A job that stops outside its steps (not in conf/jobs.yml, Ctrl-C) is
    recorded as failed with the error, then the error is raised; a run refused
    by the lock did nothing and writes no record.
    """
    conf = conf or settings()
    started = time.monotonic()
    now = datetime.now(UTC)
    record = JobRecord(job=name, started_at=now.isoformat(timespec="seconds"))
    path = record_path(conf, name, now)
    try:
        job = get_job(name, conf)
        with job_lock(conf, name):
            _run_steps(JobRunner(job, conf, log, spark, ingestor), record)
            _finish(conf, record, path, started, log)
    except JobLockedError:
        raise
    except (Exception, KeyboardInterrupt) as error:
        if record.record:  # written: the failure came after it (the notification)
            raise
        record.error = error_text(error)
        _finish(conf, record, path, started, log)
        raise
    log(
        f"job {name}: {record.status} in {record.seconds:.0f}s, "
        + ", ".join(f"{s.name} {s.status}" for s in record.steps)
        + f"; run record {path}"
    )
    return record
