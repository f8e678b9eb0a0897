"""Write the state of a DAG's latest run and of each of its tasks, as JSON, to argv[2].

Runs in the Airflow environment, reading its metadata database, after
`airflow dags test` (whose exit code alone does not say which tasks ran).
"""

from __future__ import annotations

import json
import sys

from airflow.models import DagRun
from airflow.utils.session import create_session


def main(dag_id: str, out: str) -> None:
    with create_session() as session:
        runs = DagRun.find(dag_id=dag_id, session=session)
        latest = max(runs, key=lambda run: run.start_date)
        instances = latest.get_task_instances(session=session)
        report = {
            "run_id": latest.run_id,
            "state": str(latest.state),
            "tasks": {ti.task_id: str(ti.state) for ti in instances},
        }
    with open(out, "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
