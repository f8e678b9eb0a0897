"""No secret in any output: logs, run and job records, the docs site, benchmark files.

The suite runs with distinctive AWS keys and a dbt password in its
environment (tests/conftest.py); after the daily job (ingest, dbt build,
docs) and the services have run, no file they wrote may contain them. Files
written later, or on the other pytest-xdist worker, are checked when each
worker's tests end (`no_secret_written`, tests/conftest.py).
"""

from __future__ import annotations

from ingestion.settings import settings
from tests.conftest import leaked_secrets, written_files


def test_no_output_contains_a_secret(daily_job) -> None:
    conf = settings()
    written = written_files(conf.home, conf.dbt_target_path)
    kinds = {path.suffix for path in written}
    # The outputs are there: logs, run records, the docs site's manifest.
    assert {".log", ".json", ".html"} <= kinds
    assert any(path.name.startswith("job-daily-") for path in written)
    assert leaked_secrets(written) == []
