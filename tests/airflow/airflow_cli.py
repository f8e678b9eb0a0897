"""Run the project's Airflow (`airflow/airflow`) from the tests, which live in .venv.

Airflow lives in its own virtual environment (.venv-airflow) and is not
importable here, so every test goes through `airflow/airflow`, the same
launcher a developer uses; the session's LAKEHOUSE_* settings (tests/conftest.py)
put its AIRFLOW_HOME under the test home and point it at the test stack.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AIRFLOW = REPO / "airflow" / "airflow"
HERE = Path(__file__).parent


def run_airflow(
    args: Sequence[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`airflow/airflow ARGS` with the session's environment; output captured for failures."""
    if not (REPO / ".venv-airflow" / "bin" / "airflow").exists():
        pytest.fail("no .venv-airflow: run `make setup`")
    return subprocess.run(
        [str(AIRFLOW), *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
