"""`lakehouse status`: each table's data time, lag and backlog, and its exit code.

On a lake and landing zone written as files (tests/ingestion/timeline.py):
the status reads them as the engine's plan would, without Spark. The real
lake's figures are checked against bronze in tests/scheduler/test_jobs.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingestion.paths import TablePaths
from ingestion.settings import Settings, load_settings
from ingestion.table_state import NEWEST_SOURCE_KEY
from lakehouse.status import EXIT_BEHIND, lake_status
from tests.ingestion.bronze import tables_for
from tests.ingestion.timeline import commit, sink_file

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
SOURCE_MS = 1_764_000_000_123  # 2025-11-24T16:00:00.123Z


def lake_settings(tmp_path: Path, **more: str) -> dict[str, str]:
    return {
        "landing": str(tmp_path / "landing"),
        "lake": str(tmp_path / "lake"),
        "bronze_database": "status",
        "ingest_health_file": str(tmp_path / "health.json"),
        **more,
    }


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Settings, str]:
    """category's bronze and changelog, both committed through the landing's two files."""
    conf = load_settings(lake_settings(tmp_path))
    (table,) = tables_for("status", ("category",))
    paths = TablePaths.of(conf, table)
    for offset in (0, 5):
        sink_file(tmp_path / "landing", table.topic, offset)
    for path in (paths.bronze, paths.changelog):
        commit(Path(path), "20261125100000000", {0: 0}, table.topic)
        commit(Path(path), "20261125110000000", {0: 5}, table.topic,
               {NEWEST_SOURCE_KEY: str(SOURCE_MS)})  # fmt: skip
    return conf, table.topic


def test_a_caught_up_table_shows_its_data_time_and_no_backlog(lake) -> None:
    conf, _ = lake
    (status,) = lake_status(conf, ["category"]).tables
    assert (status.data_as_of, status.backlog, status.behind_seconds) == (
        "2025-11-24T16:00:00.123Z", 0, 0.0,
    )  # fmt: skip
    completed = datetime(2026, 11, 25, 11, 0, 0, 5000).astimezone(UTC)  # Hudi's local time
    assert status.committed_at == completed.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert status.lag_seconds == pytest.approx(time.time() - SOURCE_MS / 1000, abs=5)


def test_a_file_not_applied_is_the_backlog_and_its_age_the_time_behind(lake, tmp_path) -> None:
    conf, topic = lake
    waiting = sink_file(tmp_path / "landing", topic, 9)
    landed = time.time() - 3600
    os.utime(waiting, (landed, landed))
    status = lake_status(conf, ["category"])
    (table,) = status.tables
    assert (table.backlog, table.backlog_unit) == (1, "files")
    assert table.behind_seconds == pytest.approx(3600, abs=5)
    assert status.behind == ("category",)  # past the default 900 s


def status_command(tmp_path: Path, **more: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        **{f"LAKEHOUSE_{k.upper()}": v for k, v in lake_settings(tmp_path, **more).items()},
    }
    return subprocess.run(
        [LAKEHOUSE, "status", "--tables", "category", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_command_exits_5_naming_the_table_once_a_change_waits_past_the_threshold(
    lake, tmp_path
) -> None:
    _, topic = lake
    done = status_command(tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["behind"] == []
    waiting = sink_file(tmp_path / "landing", topic, 9)
    landed = time.time() - 60
    os.utime(waiting, (landed, landed))
    assert status_command(tmp_path).returncode == 0  # within the default 900 s
    done = status_command(tmp_path, status_behind_seconds="30")
    assert done.returncode == EXIT_BEHIND, done.stderr
    assert json.loads(done.stdout)["behind"] == ["category"]
