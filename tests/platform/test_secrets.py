"""No secret in any output: logs, run and job records, the docs site, benchmark files.

The suite runs with distinctive AWS keys and a dbt password in its
environment (tests/conftest.py); after the daily job (ingest, dbt build,
docs) and the services have run, no file they wrote may contain them.
"""

from __future__ import annotations

from pathlib import Path

from ingestion.settings import settings
from tests.conftest import SECRETS


def _files(*folders: Path) -> list[Path]:
    return [path for folder in folders if folder.exists() for path in folder.rglob("*")
            if path.is_file()]  # fmt: skip


def test_no_output_contains_a_secret(daily_job) -> None:
    conf = settings()
    written = _files(conf.home, conf.dbt_target_path)
    kinds = {path.suffix for path in written}
    # The outputs are there: logs, run records, the docs site's manifest.
    assert {".log", ".json", ".html"} <= kinds
    assert any(path.name.startswith("job-daily-") for path in written)
    leaks = [
        (str(path), name)
        for path in written
        for name, secret in SECRETS.items()
        if secret.encode() in path.read_bytes()
    ]
    assert leaks == []
