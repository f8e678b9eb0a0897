"""Fixtures of the Airflow tests: what the project's DAG folder holds, loaded once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.airflow.airflow_cli import HERE, run_airflow


@pytest.fixture(scope="session")
def dag_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the DagBag holds (dag_report.py), loaded once in the Airflow environment."""
    out = tmp_path_factory.mktemp("airflow") / "report.json"
    done = run_airflow(["python", str(HERE / "dag_report.py"), str(out)], timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())
