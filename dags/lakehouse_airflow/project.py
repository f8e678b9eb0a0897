"""Where the project is, and how Airflow reaches its code, settings and tools.

Airflow runs in its own virtual environment (.venv-airflow) because its pins
clash with dbt-core's. The job definitions are read with the project's own
loader (pure Python and YAML, importable from here) so the DAGs and
`lakehouse jobs run` can never disagree about a job; everything that needs
Spark or dbt runs as a subprocess of the project's .venv.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROJECT_BIN = REPO / ".venv" / "bin"
PROJECT_PYTHON = PROJECT_BIN / "python"
DBT_EXECUTABLE = PROJECT_BIN / "dbt"
PROFILES_YML = REPO / "profiles" / "profiles.yml"
DBT_PROJECT_NAME = "tickit_lakehouse"
DBT_PROFILE = "tickit_lakehouse"
DBT_TARGET = "local"
JOB_STEP_SCRIPT = Path(__file__).with_name("job_step.py")

# Variables that would make the project's interpreter pick up Airflow's packages.
_FOREIGN_PYTHON_VARS = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")


def step_env() -> dict[str, str]:
    """A subprocess environment for the project's .venv: the worker's, minus Airflow's Python."""
    return {k: v for k, v in os.environ.items() if k not in _FOREIGN_PYTHON_VARS}
