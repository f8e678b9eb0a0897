"""kill -9 at three points of a write, then a clean rerun: nothing lost, nothing doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ingestion.paths import table_path

from .bronze import differences, expected, make_landing, run_ingest, settings_for, spark_rows
from .bronze import tables_for as bronze_tables

DEADLINE_SECONDS = 300


def timeline(conf, database: str, table: str) -> Path:
    return Path(table_path(conf, database, table)) / ".hoodie" / "timeline"


def has(folder: Path, suffix: str) -> bool:
    return folder.exists() and any(p.name.endswith(suffix) for p in folder.iterdir())


def start_ingest(
    landing: Path, lake: Path, database: str, table: str = "sales"
) -> subprocess.Popen:
    env = {
        **os.environ,
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": str(lake),
        "LAKEHOUSE_BRONZE_DATABASE": database,
    }
    command = [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", table]
    # Its own process group, so one kill takes the Python driver and its JVM at once.
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def signal_when(process: subprocess.Popen, ready: Callable[[], bool], signum: int) -> None:
    """Send `signum` to the job's process group the moment `ready()` holds."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not ready():
        assert process.poll() is None, "the job finished before the crash point"
        assert time.monotonic() < deadline, "crash point not reached in time"
        time.sleep(0.02)
    os.killpg(process.pid, signum)


def in_flight(folder: Path) -> bool:
    """A write requested and not completed: completed instants keep their
    `.inflight` file, and add `<instant>_<completion>.<action>`."""
    if not folder.exists():
        return False
    names = [p.name for p in folder.iterdir()]
    started = {n.split(".")[0] for n in names if n.endswith(".inflight")}
    done = {n.split("_")[0] for n in names if "_" in n and not n.startswith(".")}
    return bool(started - done)


def kill_when(process: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """SIGKILL the job the moment `ready()` holds; fail if it finished first."""
    signal_when(process, ready, signal.SIGKILL)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


CRASH_POINTS = {
    "changelog write in flight": lambda c, d: has(timeline(c, d, "sales_changelog"), ".inflight"),
    "changelog committed, bronze not": lambda c, d: has(
        timeline(c, d, "sales_changelog"), ".commit"
    ),
    "bronze write in flight": lambda c, d: has(timeline(c, d, "sales"), ".inflight"),
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_kill_9_then_rerun_gives_the_exact_final_state(spark, tmp_path: Path, point: str) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    conf = settings_for(landing, tmp_path / "lake")
    database = "crash_" + str(list(CRASH_POINTS).index(point))
    process = start_ingest(landing, tmp_path / "lake", database)
    kill_when(process, lambda: CRASH_POINTS[point](conf, database))

    results = run_ingest(spark, conf, bronze_tables(database, ("sales",)))
    assert results["sales"].committed
    rows = spark_rows(spark, conf, database, "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    changelog = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog)
    # A third run finds nothing new: the rerun's checkpoint covers every file.
    assert not run_ingest(spark, conf, bronze_tables(database, ("sales",)))["sales"].committed
