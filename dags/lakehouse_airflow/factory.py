"""One Airflow DAG per job of conf/jobs.yml, with the job's schedule, owner and retries.

Steps become tasks in the order the job lists them:

- `ingest`: one task per source system (ems, ecomm, crm), in parallel, so a
  failing database retries alone; each ingests its tables exactly once.
- `dbt build` (whole project): an astronomer-cosmos group, one task per model
  and one for its tests (dbt_group.py).
- `dbt build` with `select: touched`: one task. What to build is only known
  once ingestion has run, and a cosmos group's tasks are fixed when the DAG
  is parsed, so the task reads the ingest tasks' results (the tables that got
  a commit) and builds `source:<table>+` for them, exactly as
  `lakehouse jobs run` does; it is skipped when nothing new arrived.
- any other dbt step (`source freshness`, `docs generate`): one task.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

from airflow.sdk import DAG, TaskGroup, task

from ingestion.config import load_tables
from lakehouse.scheduler.jobs_file import Job, Step, load_jobs
from lakehouse_airflow import steps
from lakehouse_airflow.dbt_group import dbt_build_group

DAG_PREFIX = "lakehouse__"
# Schedules start counting here; catchup is off, so no past run is ever made.
START_DATE = datetime(2024, 1, 1, tzinfo=UTC)


def dag_id(job: str) -> str:
    return f"{DAG_PREFIX}{job}"


def tables_by_source(only: Iterable[str] = ()) -> dict[str, list[str]]:
    """Bronze tables per source system, in conf/tables.yml order; `only` narrows them."""
    wanted = set(only)
    groups: dict[str, list[str]] = {}
    for name, table in load_tables().items():
        if not wanted or name in wanted:
            groups.setdefault(table.source.name, []).append(name)
    return groups


def _is_cosmos_build(step: Step) -> bool:
    return step.run == "dbt" and list(step.args) == ["build"] and not step.select


def _ingest(job: Job, step: Step) -> tuple[TaskGroup, list[Any]]:
    with TaskGroup(step.name, tooltip="ingest, one task per source system") as group:
        touched = [
            task(task_id=source, doc_md=f"Ingest {', '.join(tables)} (source `{source}`).")(
                steps.ingest
            )(job.name, step.name, tables)
            for source, tables in tables_by_source(step.tables).items()
        ]
    return group, touched


def build_dag(job: Job) -> DAG:
    default_args = {
        "owner": job.owner,
        "retries": job.retries,
        "retry_delay": timedelta(minutes=job.retry_delay_minutes),
    }
    with DAG(
        dag_id=dag_id(job.name),
        description=job.description,
        doc_md=f"`lakehouse jobs run {job.name}` on a schedule: {job.description}",
        schedule=job.schedule,
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        default_args=default_args,
        tags=["lakehouse", job.name],
    ) as dag:
        stages: list[Any] = []
        touched: list[Any] = []
        for step in job.steps:
            if step.run == "ingest":
                group, touched = _ingest(job, step)
                stages.append(group)
            elif step.run == "maintain":
                doc = "`lakehouse maintain`: compact the merge-on-read bronze tables"
                maintain = task(task_id=step.name, doc_md=doc)(steps.maintain)
                stages.append(maintain(job.name, step.name))
            elif _is_cosmos_build(step):
                stages.append(dbt_build_group(step.name, default_args))
            else:
                since = touched if step.select == "touched" else None
                call = task(task_id=step.name, doc_md=f"`dbt {' '.join(step.args)}`")(steps.dbt)
                stages.append(call(job.name, step.name, since))
        for before, after in pairwise(stages):
            before >> after
    return dag


def build_dags() -> dict[str, DAG]:
    """Every job's DAG by DAG id, for the DAG file's globals."""
    return {dag_id(name): build_dag(job) for name, job in load_jobs().items()}
