"""One run of the daily DAG end to end, with `airflow dags test`, against the session's stack.

It runs after the session's `daily` job (so bronze and the marts exist) and
replays what a Debezium connector does after a restart: it re-sends the last
batch of category changes, which lands as a new sink file. The DAG's ingest
tasks consume that file in a real Hudi commit and, by source position, change
nothing; freshness, the cosmos dbt tasks and docs then run on the Thrift
server. The other tests' data is left exactly as it was.

The cosmos group is narrowed to the category staging model
(LAKEHOUSE_AIRFLOW_DBT_SELECT): its run, its tests and a test it shares with
another model still run as cosmos tasks, while a full build is ~90 dbt
processes, far past CI's limit on two cores. The full graph is checked in
test_dags.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ingestion.checkpoint import read_checkpoint
from ingestion.config import load_tables
from ingestion.paths import table_path
from ingestion.settings import settings
from ingestion.sources.landing import LandingFile, parse_file_name
from tests.airflow.airflow_cli import HERE, run_airflow

DAG = "lakehouse__daily"
SELECT = "stg_tickit__categories"
RUN_SECONDS = 540


def redeliver_last_file(topic: str) -> LandingFile:
    """Copy the topic's last sink file under the next start offset, as a replay would land."""
    root = Path(settings().landing) / "topics" / topic
    files = sorted(
        parsed for path in root.rglob("*") if (parsed := parse_file_name(str(path), topic))
    )
    last = files[-1]
    assert last.format == "json", last
    events = len(Path(last.path).read_text().splitlines())
    digits = len(Path(last.path).stem.rsplit("+", 1)[1])  # the sink zero-pads offsets
    name = f"{topic}+{last.partition}+{last.offset + events:0{digits}d}.json"
    replay = Path(last.path).with_name(name)
    shutil.copyfile(last.path, replay)
    return LandingFile(last.partition, last.offset + events, str(replay), "json")


def bronze(spark, table: str) -> list[tuple]:
    """The table's business columns, sorted: what a replay must leave unchanged."""
    config = load_tables()[table]
    columns = ", ".join(f"`{c}`" for c in config.columns)
    return sorted(
        tuple(r) for r in spark.sql(f"select {columns} from {config.database}.{table}").collect()
    )


@pytest.fixture(scope="module")
def dag_run(daily_job, spark, tmp_path_factory) -> dict[str, Any]:
    """The DAG run: its exit, the task states, and category's bronze and checkpoint around it."""
    assert daily_job.status == "success", daily_job
    category = load_tables()["category"]
    before = bronze(spark, "category")
    replay = redeliver_last_file(category.topic)
    done = run_airflow(
        ["dags", "test", DAG], timeout=RUN_SECONDS, env={"LAKEHOUSE_AIRFLOW_DBT_SELECT": SELECT}
    )
    out = tmp_path_factory.mktemp("airflow-run") / "states.json"
    states = run_airflow(["python", str(HERE / "dag_run_states.py"), DAG, str(out)], timeout=120)
    assert states.returncode == 0, states.stdout[-2000:] + states.stderr[-2000:]
    path = table_path(settings(), category.database, "category")
    return {
        "done": done,
        "run": json.loads(out.read_text()),
        "replay": replay,
        "before": before,
        "after": bronze(spark, "category"),
        "checkpoint": read_checkpoint(spark, path, category.topic),
    }


def test_dag_run_succeeds_in_every_task(dag_run) -> None:
    done, run = dag_run["done"], dag_run["run"]
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert run["state"] == "success", run
    assert run["tasks"] == {task: "success" for task in run["tasks"]}, run["tasks"]
    assert {
        "ingest.ems",
        "ingest.ecomm",
        "ingest.crm",
        "freshness",
        "build.stg_tickit__categories.run",
        "build.stg_tickit__categories.test",
        "docs",
    } <= set(run["tasks"])


def test_replayed_file_is_committed_once_and_changes_nothing(dag_run) -> None:
    replay: LandingFile = dag_run["replay"]
    assert dag_run["checkpoint"].offsets[replay.partition] == replay.offset
    assert dag_run["after"] == dag_run["before"]
