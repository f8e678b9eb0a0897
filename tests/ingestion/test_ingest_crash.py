"""kill -9 at five points of a write, then a clean rerun: nothing lost, nothing doubled.

The points: the changelog commit in flight, between the changelog and the
bronze commit, the bronze commit in flight, the metadata table's update for
the bronze commit in flight, and maintenance's table services in flight (a
merge-on-read table's compaction, a changelog's clustering). Each is found by
polling the Hudi timeline, then the job is killed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ingestion.hudi_timeline import METADATA_TABLE, timeline_folder
from ingestion.maintenance import maintain
from ingestion.nothing_new import nothing_new
from ingestion.paths import table_path
from lakehouse.cdc.generate import OpMix

from .bronze import differences, expected, make_landing, run_ingest, settings_for, spark_rows
from .bronze import tables_for as bronze_tables

# Generous: a busy machine takes minutes to start a JVM; the wait is a poll, not a sleep.
DEADLINE_SECONDS = 900


def timeline(conf, database: str, table: str) -> Path:
    return timeline_folder(Path(table_path(conf, database, table)))


def has(folder: Path, suffix: str) -> bool:
    return folder.exists() and any(p.name.endswith(suffix) for p in folder.iterdir())


def metadata_table(conf, database: str, table: str) -> Path:
    return Path(table_path(conf, database, table)) / METADATA_TABLE


def metadata_timeline(conf, database: str, table: str) -> Path:
    return timeline_folder(metadata_table(conf, database, table))


def in_flight(folder: Path, action: str = "") -> list[str]:
    """Instants (of `action`, or of any action) requested on a timeline and not completed.

    Completed instants keep their `.inflight` file and add `<instant>_<completion>.<action>`.
    """
    if not folder.exists():
        return []
    names = [p.name for p in folder.iterdir()]
    done = {name.split("_")[0] for name in names if "_" in name and not name.startswith(".")}
    suffix = f".{action}.inflight" if action else ".inflight"
    return [
        name.split(".")[0]
        for name in names
        if name.endswith(suffix) and name.split(".")[0] not in done
    ]


def metadata_update_in_flight(conf, database: str) -> bool:
    """The metadata table's delta commit for a bronze commit (not its set-up instants 000...)."""
    pending = in_flight(metadata_timeline(conf, database, "sales"), "deltacommit")
    return any(not instant.startswith("0000") for instant in pending)


def start_ingest(
    landing: Path,
    lake: Path,
    database: str,
    table: str = "sales",
    module: list[str] | None = None,
    **settings: str,
) -> subprocess.Popen:
    """`lakehouse ingest` (or `module`) of one table in a process group of its own.

    `settings` are extra LAKEHOUSE_* variables, e.g. ingest_poll_seconds="0.5".
    """
    env = {
        **os.environ,
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": str(lake),
        "LAKEHOUSE_BRONZE_DATABASE": database,
        **{f"LAKEHOUSE_{name.upper()}": value for name, value in settings.items()},
    }
    command = [sys.executable, "-m", *(module or ["lakehouse.cli", "ingest", "--tables", table])]
    # Its own process group, so one kill takes the Python driver and its JVM at once.
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def signal_when(process: subprocess.Popen, ready: Callable[[], bool], signum: int) -> None:
    """Send `signum` to the job's process group the moment `ready()` holds.

    The job finishing first fails the test. A failed wait kills the job, so it
    leaves no writer behind.
    """
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while not ready():
            assert process.poll() is None, "the job finished before the crash point"
            assert time.monotonic() < deadline, "crash point not reached in time"
            time.sleep(0.02)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        raise
    os.killpg(process.pid, signum)


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
    "metadata table update in flight": metadata_update_in_flight,
}
# Settings per crash point: a metadata table needs the record-level index, which a
# table this small goes without below record_index_min_mb (hudi_writer.use_record_index)
# and a table with buckets goes without at all, so the killed run has none.
POINT_SETTINGS: dict[str, dict[str, int]] = {
    "metadata table update in flight": {"record_index_min_mb": 0}
}
POINT_MODULES = {
    "metadata table update in flight": ["tests.ingestion.run_ingest", "{database}", "sales",
                                        "buckets=none"],
}  # fmt: skip
UPDATES_ONLY = OpMix(c=0, u=0.8, d=0.2)


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_kill_9_then_rerun_gives_the_exact_final_state(spark, tmp_path: Path, point: str) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    extra = POINT_SETTINGS.get(point, {})
    conf = dataclasses.replace(settings_for(landing, tmp_path / "lake"), **extra)
    database = "crash_" + str(list(CRASH_POINTS).index(point))
    module = [part.format(database=database) for part in POINT_MODULES.get(point, [])]
    process = start_ingest(
        landing, tmp_path / "lake", database, module=module or None,
        **{k: str(v) for k, v in extra.items()},
    )  # fmt: skip
    kill_when(process, lambda: CRASH_POINTS[point](conf, database))
    # The JVM-free check sees what the kill left unapplied, at every crash point.
    assert nothing_new(conf, bronze_tables(database, ("sales",))) is None

    results = run_ingest(spark, conf, bronze_tables(database, ("sales",)))
    assert results["sales"].committed
    rows = spark_rows(spark, conf, database, "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    changelog = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog)
    # A third run finds nothing new: the rerun's checkpoint covers every file;
    # the JVM-free check, reading the same commits, agrees.
    assert nothing_new(conf, bronze_tables(database, ("sales",))) is not None
    assert not run_ingest(spark, conf, bronze_tables(database, ("sales",)))["sales"].committed


def test_kill_9_during_maintenance_compaction_then_rerun(spark, tmp_path: Path) -> None:
    """Maintenance compacts a merge-on-read table off the ingest path (ingestion/maintenance.py).

    Killed -9 while its compaction runs, the compaction stays pending; a batch
    ingested meanwhile lands in the log files of the file slice after it; the
    next maintenance finishes it, and the table is exact.
    """
    landing, lake, database = tmp_path / "landing", tmp_path / "lake", "crash_compaction"
    conf = settings_for(landing, lake)
    mor = bronze_tables(database, ("sales",), table_type="mor")
    for batches in range(2):
        make_landing(landing, change_batches=batches, op_mix=UPDATES_ONLY)
        assert run_ingest(spark, conf, mor)["sales"].committed
    command = ["tests.ingestion.run_ingest", database, "sales", "table_type=mor", "--maintain"]
    process = start_ingest(landing, lake, database, module=command)
    kill_when(process, lambda: bool(in_flight(timeline(conf, database, "sales"), "compaction")))
    assert in_flight(timeline(conf, database, "sales"), "compaction")

    make_landing(landing, change_batches=2, op_mix=UPDATES_ONLY)
    assert run_ingest(spark, conf, mor)["sales"].committed
    done = maintain(spark, conf, mor, log=lambda _: None)
    assert [m.compacted for m in done] == [True]
    # The compaction and clean ran with the table's own settings: no metadata table to
    # build (the bucket index needs none) for the next write to delete again.
    assert not metadata_table(conf, database, "sales").exists()
    assert not in_flight(timeline(conf, database, "sales"), "compaction")
    rows = spark_rows(spark, conf, database, "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    changelog = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog)
    # The newest completed commit is a compaction's, without a checkpoint: walked past.
    assert nothing_new(conf, mor) is not None
    assert not run_ingest(spark, conf, mor)["sales"].committed


def test_kill_9_during_changelog_clustering_then_rerun(spark, tmp_path: Path) -> None:
    """Maintenance clusters a changelog's files, one per bulk-inserted batch (maintenance.py).

    Killed -9 while its clustering runs, the clustering stays pending; a batch
    ingested meanwhile writes a file of its own, and Hudi finishes the pending
    clustering (the write's own table services, else the next maintenance):
    the changelog keeps every event once, in two files where there were four.
    """
    landing, lake, database = tmp_path / "landing", tmp_path / "lake", "crash_clustering"
    conf = dataclasses.replace(settings_for(landing, lake), changelog_cluster_commits=2)
    tables = bronze_tables(database, ("sales",))
    # No redelivered or late events: each batch sorts past the stored ones, a bulk insert.
    in_order = {"op_mix": UPDATES_ONLY, "duplicate_fraction": 0, "late_updates_per_topic": 0}
    for batches in range(3):
        make_landing(landing, change_batches=batches, **in_order)
        assert run_ingest(spark, conf, tables)["sales"].committed
    before = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_hoodie_file_name"] for r in before}) == 3  # the snapshot, two batches
    changelog = timeline(conf, database, "sales_changelog")
    command = ["tests.ingestion.run_ingest", database, "sales", "--maintain"]
    process = start_ingest(landing, lake, database, module=command, changelog_cluster_commits="2")
    kill_when(process, lambda: bool(in_flight(changelog, "clustering")))

    make_landing(landing, change_batches=3, **in_order)
    assert run_ingest(spark, conf, tables)["sales"].committed
    maintain(spark, conf, tables, log=lambda _: None)
    assert not in_flight(changelog, "clustering")
    assert not metadata_table(conf, database, "sales_changelog").exists()  # as its writes keep
    assert has(changelog, ".replacecommit")
    after = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_hoodie_file_name"] for r in after}) == 2  # clustered, and the new batch's
    assert set(map(_event, before)) < set(map(_event, after))
    assert len({r["_cdc_event_id"] for r in after}) == len(after)
    rows = spark_rows(spark, conf, database, "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    # The newest completed commit may be the clustering's, without a checkpoint: walked past.
    assert nothing_new(conf, tables) is not None
    assert not run_ingest(spark, conf, tables)["sales"].committed


def _event(row: dict) -> tuple:
    """A changelog row without Hudi's meta columns (the file name and commit change)."""
    return tuple(sorted((k, str(v)) for k, v in row.items() if not k.startswith("_hoodie")))
