"""Two writers of the same tables at once: one waits for the other; nothing doubled or lost.

Two `lakehouse ingest` processes, or an ingest and a scheduled job's ingest
step, start together on the same landing zone and lake. Each table's writer
lock lets one plan and commit while the other waits, then plans from what was
committed and finds nothing new: the bronze tables equal the generator's
expected state, every changelog event is there once, and each table has
exactly one commit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from .bronze import differences, expected, make_landing, settings_for, spark_rows
from .test_ingest_crash import timeline

TABLES = ("sales", "users")
TIMEOUT_SECONDS = 900


def _env(landing: Path, lake: Path, database: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": str(lake),
        "LAKEHOUSE_BRONZE_DATABASE": database,
        **extra,
    }


def _lakehouse(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "lakehouse.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _check_final_state(spark, landing: Path, lake: Path, database: str) -> None:
    conf = settings_for(landing, lake)
    for table in TABLES:
        key = "salesid" if table == "sales" else "userid"
        rows = spark_rows(spark, conf, database, table)
        assert differences(rows, expected(landing, table), key) == [], table
        changelog = spark_rows(spark, conf, database, f"{table}_changelog")
        assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog), table
        commits = [p for p in timeline(conf, database, table).iterdir()
                   if p.name.endswith(".commit")]  # fmt: skip
        assert len(commits) == 1, (table, sorted(p.name for p in commits))


def _finish(*processes: subprocess.Popen) -> list[str]:
    outputs = [process.communicate(timeout=TIMEOUT_SECONDS)[0] for process in processes]
    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output[-3000:]
    return outputs


def test_two_ingests_at_once_apply_every_change_once(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    lake, database = tmp_path / "lake", "race_ingest"
    env = _env(landing, lake, database)
    tables = ",".join(TABLES)
    _finish(_lakehouse("ingest", "--tables", tables, env=env),
            _lakehouse("ingest", "--tables", tables, env=env))  # fmt: skip
    _check_final_state(spark, landing, lake, database)


def test_an_ingest_racing_a_scheduled_job_applies_every_change_once(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    lake, database = tmp_path / "lake", "race_job"
    jobs_file = tmp_path / "jobs.yml"
    steps = [{"name": "ingest", "run": "ingest", "tables": list(TABLES)}]
    jobs_file.write_text(yaml.safe_dump({"jobs": {"hourly": {"steps": steps}}}))
    env = _env(landing, lake, database, LAKEHOUSE_JOBS_FILE=str(jobs_file))
    _finish(_lakehouse("jobs", "run", "hourly", env=env),
            _lakehouse("ingest", "--tables", ",".join(TABLES), env=env))  # fmt: skip
    _check_final_state(spark, landing, lake, database)
