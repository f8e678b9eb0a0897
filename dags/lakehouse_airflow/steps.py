"""Task callables: run one job step in the project's .venv and turn its record into a task outcome.

A failed step fails the task (so Airflow retries it); a skipped step (the
hourly build when no dbt source received data) skips it, so the run shows
that nothing needed building rather than a green no-op.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from airflow.sdk.exceptions import AirflowException, AirflowSkipException

from lakehouse_airflow.project import JOB_STEP_SCRIPT, PROJECT_PYTHON, REPO, step_env


def run_step(
    job: str, step: str, tables: Iterable[str] = (), touched: Iterable[str] = ()
) -> dict[str, Any]:
    """Run `job_step.py JOB STEP`; return its record; raise for failure or skip."""
    with tempfile.TemporaryDirectory(prefix="lakehouse-step-") as folder:
        result = Path(folder) / "record.json"
        command = [str(PROJECT_PYTHON), str(JOB_STEP_SCRIPT), job, step, "--result", str(result)]
        if tables:
            command += ["--tables", ",".join(tables)]
        if touched:
            command += ["--touched", ",".join(touched)]
        # Output is inherited: Spark's and dbt's progress go straight to the task log.
        done = subprocess.run(command, cwd=REPO, env=step_env(), check=False)
        record = json.loads(result.read_text()) if result.exists() else None
    if record is None or done.returncode != 0 or record["status"] == "failed":
        reason = record["error"] if record else f"exited with {done.returncode}, no record"
        raise AirflowException(f"{job}.{step} failed: {reason}")
    if record["status"] == "skipped":
        raise AirflowSkipException(record["detail"].get("reason", "nothing to do"))
    return record


def ingest(job: str, step: str, tables: list[str]) -> list[str]:
    """Ingest these tables; return the ones that got a commit (for `select: touched`)."""
    return run_step(job, step, tables=tables)["touched"]


def maintain(job: str, step: str) -> dict[str, Any]:
    """Compact the merge-on-read bronze tables before dbt reads them."""
    return run_step(job, step)["detail"]


def dbt(job: str, step: str, touched: list[list[str]] | None = None) -> dict[str, Any]:
    """Run a dbt step; with `touched` (the ingest tasks' results) build only what they changed."""
    tables = sorted({table for batch in touched or [] for table in batch or []})
    if touched is not None and not tables:
        raise AirflowSkipException("no new data in any dbt source")
    return run_step(job, step, touched=tables)["detail"]
