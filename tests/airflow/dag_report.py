"""Load the project's DAG folder and write what the DAG tests check, as JSON, to argv[1].

Runs in the Airflow environment (`airflow/airflow python dag_report.py`), since
Airflow is not importable from the project's .venv where pytest runs. A file,
not stdout: Airflow logs to stdout.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

from airflow.dag_processing.dagbag import DagBag


def _seconds(value: object) -> float | None:
    return value.total_seconds() if isinstance(value, timedelta) else None


def main() -> None:
    bag = DagBag(dag_folder=os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    report = {
        "import_errors": {str(path): str(error) for path, error in bag.import_errors.items()},
        "dags": {},
    }
    for dag_id, dag in bag.dags.items():
        report["dags"][dag_id] = {
            "description": dag.description,
            "schedule": str(dag.schedule),
            "catchup": dag.catchup,
            "max_active_runs": dag.max_active_runs,
            "tags": sorted(dag.tags),
            "default_args": {
                k: _seconds(v) if isinstance(v, timedelta) else v
                for k, v in dag.default_args.items()
            },
            "tasks": {
                t.task_id: {
                    "operator": type(t).__name__,
                    "owner": t.owner,
                    "retries": t.retries,
                    "retry_delay": _seconds(t.retry_delay),
                    "upstream": sorted(t.upstream_task_ids),
                    "email": t.email,
                }
                for t in dag.tasks
            },
        }
    with open(sys.argv[1], "w") as out:
        json.dump(report, out)


if __name__ == "__main__":
    main()
