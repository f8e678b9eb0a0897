"""Airflow DAGs generated from conf/jobs.yml: the factory and its helpers.

Imported by the DAG file in the Airflow environment (.venv-airflow), never by
the project's own environment; the steps themselves run in .venv.
"""

import sys
from pathlib import Path

# The project's job and table loaders (pure Python and YAML) are read from the
# repository itself. Appended, not prepended: the repository must not shadow
# installed packages (it has an `airflow/` folder of its own).
_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.append(_REPO)
