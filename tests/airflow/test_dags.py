"""The DAG folder, as CI checks it before a deploy: it imports, and each DAG is the job it claims.

The expectations come from conf/jobs.yml, conf/tables.yml and dbt's manifest,
so a job, table or model added there is checked here without editing the test.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest

from ingestion.config import load_tables
from ingestion.settings import settings
from lakehouse.scheduler.jobs_file import Job, load_jobs

PREFIX = "lakehouse__"
JOBS = load_jobs()
SOURCES = {table.source.name for table in load_tables().values()}


def ancestors(tasks: dict[str, Any], task_id: str) -> set[str]:
    """Every task that must finish before `task_id` starts."""
    seen: set[str] = set()
    todo = list(tasks[task_id]["upstream"])
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(tasks[current]["upstream"])
    return seen


def step_tasks(tasks: dict[str, Any], step: str) -> set[str]:
    """The tasks of one job step: the task named after it, or its group's tasks."""
    return {t for t in tasks if t == step or t.startswith(f"{step}.")}


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    """dbt's manifest, the one the DAGs were rendered from (airflow/airflow writes it)."""
    return json.loads((settings().dbt_target_path / "manifest.json").read_text())


def test_dag_folder_imports_without_errors(dag_report) -> None:
    assert dag_report["import_errors"] == {}


def test_one_dag_per_job(dag_report) -> None:
    assert set(dag_report["dags"]) == {f"{PREFIX}{name}" for name in JOBS}
    assert {"daily", "hourly"} <= set(JOBS)


@pytest.mark.parametrize("job", JOBS.values(), ids=list(JOBS))
def test_schedule_owner_and_retries_come_from_the_jobs_file(dag_report, job: Job) -> None:
    dag = dag_report["dags"][f"{PREFIX}{job.name}"]
    assert dag["schedule"] == job.schedule
    assert dag["catchup"] is False
    assert dag["max_active_runs"] == 1
    assert len(dag["description"]) > 15 and job.name in dag["tags"]
    assert dag["default_args"] == {
        "owner": job.owner,
        "retries": job.retries,
        "retry_delay": job.retry_delay_minutes * 60.0,
    }
    for task_id, task in dag["tasks"].items():
        assert (task["owner"], task["retries"]) == (job.owner, job.retries), task_id
        assert task["retry_delay"] == job.retry_delay_minutes * 60.0, task_id
        # Failures are reported by the job's notify hooks: no Airflow e-mail address.
        assert not task["email"], task_id
    # The seed's guard rails: a real owner and a bounded number of retries.
    assert job.owner.lower() != "airflow" and job.retries <= 3


@pytest.mark.parametrize("job", JOBS.values(), ids=list(JOBS))
def test_tasks_follow_the_order_of_the_job_steps(dag_report, job: Job) -> None:
    tasks = dag_report["dags"][f"{PREFIX}{job.name}"]["tasks"]
    groups = [step_tasks(tasks, step.name) for step in job.steps]
    assert all(groups), groups
    assert set().union(*groups) == set(tasks)
    for done, later in pairwise(groups):
        for task_id in later:
            assert done <= ancestors(tasks, task_id), task_id


@pytest.mark.parametrize("job", JOBS.values(), ids=list(JOBS))
def test_ingestion_is_one_task_per_source_system(dag_report, job: Job) -> None:
    tasks = dag_report["dags"][f"{PREFIX}{job.name}"]["tasks"]
    assert step_tasks(tasks, "ingest") == {f"ingest.{source}" for source in SOURCES}
    assert len(SOURCES) == 3


def test_daily_builds_one_task_per_model_and_one_for_its_tests(dag_report, manifest) -> None:
    tasks = dag_report["dags"][f"{PREFIX}daily"]["tasks"]
    nodes = manifest["nodes"].values()
    models = {n["unique_id"]: n["name"] for n in nodes if n["resource_type"] == "model"}
    runs = {t for t in tasks if t.startswith("build.") and t.endswith(".run")}
    assert runs == {f"build.{name}.run" for name in models.values()}
    assert all(tasks[t]["operator"] == "DbtRunLocalOperator" for t in runs)
    for test in (n for n in nodes if n["resource_type"] == "test"):
        parents = [models[p] for p in test["depends_on"]["nodes"] if p in models]
        sources = [manifest["sources"][p] for p in test["depends_on"]["nodes"] if "source." in p]
        if not parents:  # a source's tests: one task per source, before its models
            assert {f"build.{s['source_name']}_{s['name']}.test" for s in sources} <= set(tasks)
        elif len(parents) == 1:
            assert f"build.{parents[0]}.test" in tasks, test["name"]
        elif parents:  # several parents: its own task, after all of them
            task_id = f"build.{test['name']}_test"
            assert {f"build.{p}.run" for p in parents} <= ancestors(tasks, task_id)
    # Model order is dbt's: a model runs after its parents were built and tested.
    for unique_id, name in models.items():
        for parent in manifest["nodes"][unique_id]["depends_on"]["nodes"]:
            if parent in models:
                assert f"build.{models[parent]}.test" in ancestors(tasks, f"build.{name}.run")


def test_daily_runs_freshness_and_docs_as_single_dbt_tasks(dag_report) -> None:
    tasks = dag_report["dags"][f"{PREFIX}daily"]["tasks"]
    assert {t: tasks[t]["operator"] for t in ("freshness", "docs")} == {
        "freshness": "_PythonDecoratedOperator",
        "docs": "_PythonDecoratedOperator",
    }
    assert step_tasks(tasks, "build") <= ancestors(tasks, "docs")


def test_hourly_builds_what_ingestion_touched_in_one_task(dag_report) -> None:
    tasks = dag_report["dags"][f"{PREFIX}hourly"]["tasks"]
    assert JOBS["hourly"].steps[-1].select == "touched"
    assert set(tasks) == {f"ingest.{s}" for s in SOURCES} | {"maintain", "build"}
    assert set(tasks["maintain"]["upstream"]) == {f"ingest.{s}" for s in SOURCES}
    assert set(tasks["build"]["upstream"]) == {f"ingest.{s}" for s in SOURCES} | {"maintain"}
