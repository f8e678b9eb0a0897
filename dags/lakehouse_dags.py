"""Airflow DAGs of the lakehouse, one per job of conf/jobs.yml: lakehouse__daily, lakehouse__hourly.

The schedule, steps, owner and retries come from the jobs file, so these DAGs
and `lakehouse jobs run NAME` run the same definitions. Built by
lakehouse_airflow/factory.py; run locally with `airflow/airflow` (README).
"""

import sys
from pathlib import Path

# Airflow 3 no longer puts the DAG folder on sys.path; the factory lives next to this file.
if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))

from lakehouse_airflow.factory import build_dags

globals().update(build_dags())
