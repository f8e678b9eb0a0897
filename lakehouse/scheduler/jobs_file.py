"""conf/jobs.yml: the job definitions, loaded and checked.

The same definitions drive `lakehouse jobs run` and the Airflow DAGs in dags/,
so this module stays light (no Spark, no dbt): the DAG files import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ingestion.errors import UserError
from ingestion.settings import Settings, settings

STEP_KINDS = ("ingest", "maintain", "dbt")


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


def build_args(job: Job) -> tuple[str, ...]:
    """The arguments of the job's `dbt build` step after `build` (its test scope, say)."""
    step = next((s for s in job.steps if s.run == "dbt" and s.args[:1] == ("build",)), None)
    if step is None:
        raise UserError(f"job '{job.name}' has no `dbt build` step")
    return step.args[1:]


def get_job(name: str, conf: Settings | None = None) -> Job:
    jobs = load_jobs((conf or settings()).jobs_file)
    if name not in jobs:
        raise UserError(f"unknown job '{name}'; known: {', '.join(jobs)}")
    return jobs[name]
