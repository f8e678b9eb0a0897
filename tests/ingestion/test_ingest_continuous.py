"""`lakehouse ingest --continuous`: files picked up as they land, SIGTERM, kill -9 and restart.

The service runs as the real command in its own process group; the test lands
the generator's batches one by one (as the sink would), polls the health file
and the table with deadlines, and checks the exact final state.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from py4j.protocol import Py4JJavaError

from ingestion.checkpoint import read_checkpoint
from ingestion.config import load_tables
from ingestion.engine import longest_first
from ingestion.maintenance import needs_compaction
from ingestion.paths import table_path
from ingestion.plan import TableMemory
from ingestion.sources.landing import parse_file_name
from lakehouse.bench.staging import Landing, open_landing, stage

from .bronze import differences, expected, make_landing, settings_for, spark_rows
from .test_ingest_crash import in_flight, kill_when, start_ingest, timeline

REPO = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 600  # a busy shared machine: generous, and every wait polls

TABLE, KEY, TOPIC = "sales", "salesid", "tickit.ecomm.sale"


def start_service(
    landing: Path, lake: Path, database: str, health: Path, project: Path | None = None
) -> subprocess.Popen:
    """The service of `sales` alone; or of every table of `project`'s config, as it grows."""
    tables = [] if project else ["--tables", TABLE]
    return start_ingest(
        landing,
        lake,
        database,
        module=["lakehouse.cli", "ingest", "--continuous", *tables],
        ingest_poll_seconds="0.5",
        ingest_min_sync_seconds="1",
        ingest_health_file=str(health),
        **({"project_dir": str(project)} if project else {}),
    )


def project_with(root: Path, tables: tuple[str, ...], **fields: str) -> Path:
    """A copy of the project's conf/ whose tables.yml holds only `tables` (with `fields` set)."""
    shutil.copytree(REPO / "conf", root / "conf")
    add_entries(root, tables, **fields)
    return root


def add_entries(root: Path, tables: tuple[str, ...], **fields: str) -> None:
    """Rewrite the copy's tables.yml with `tables` (the project's entries) in one rename."""
    document = yaml.safe_load((REPO / "conf" / "tables.yml").read_text())
    document["tables"] = {name: {**document["tables"][name], **fields} for name in tables}
    partial = root / "conf" / ".tables.yml"
    partial.write_text(yaml.safe_dump(document, sort_keys=False))
    partial.replace(root / "conf" / "tables.yml")


def wait_for(what: str, ready: Callable[[], bool], process: subprocess.Popen) -> None:
    """Poll `ready` until it holds; fail when the service dies or the deadline passes."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not ready():
        assert process.poll() is None, f"the service exited ({process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_SECONDS} s"
        time.sleep(0.2)


def health_of(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def applied(spark, conf, database: str, batch: int, generated: Landing) -> Callable[[], bool]:
    """True once the bronze checkpoint is past the start offset of the batch's last file."""
    last = max(parse_file_name(f, TOPIC).offset for f in generated.files(batch)[TOPIC])
    path = table_path(conf, database, TABLE)
    return lambda: committed_offset(spark, path) >= last


def committed(spark, path: str, topic: str) -> bool:
    """True once the table has a checkpoint of `topic` (its first commit is complete)."""
    try:
        return bool(read_checkpoint(spark, path, topic).offsets)
    except Py4JJavaError:
        return False  # not there yet, or hoodie.properties being written


def committed_offset(spark, path: str) -> int:
    """The table's checkpointed offset; -1 while the service is still writing its properties.

    This poll is a reader racing the writer: Hudi writes `hoodie.properties` in
    place (when it creates the table, and when a commit updates the table's
    config), so a read can find it empty and Hudi says the table does not exist.
    """
    try:
        return read_checkpoint(spark, path, TOPIC).offsets.get(0, -1)
    except Py4JJavaError as error:
        if error.java_exception.getClass().getName().endswith("TableNotFoundException"):
            return -1
        raise


def assert_exact_state(spark, conf, database: str, root: Path) -> None:
    rows = spark_rows(spark, conf, database, TABLE)
    assert differences(rows, expected(root, TABLE), KEY) == []
    changelog = spark_rows(spark, conf, database, f"{TABLE}_changelog")
    assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog)
    bronze = read_checkpoint(spark, table_path(conf, database, TABLE), TOPIC)
    log = read_checkpoint(spark, table_path(conf, database, f"{TABLE}_changelog"), TOPIC)
    assert bronze.offsets == log.offsets  # both commits of every batch, none stopped halfway


def stop(process: subprocess.Popen) -> int:
    os.kill(process.pid, signal.SIGTERM)  # the driver only, as a scheduler signals its child
    return process.wait(timeout=DEADLINE_SECONDS)


def test_files_are_picked_up_as_they_land_and_sigterm_stops_between_commits(
    spark, tmp_path: Path
) -> None:
    """The service serves the config's one table; `category`, added to the config while it
    runs, is served from the next poll on, its files landed long before included."""
    root = make_landing(tmp_path / "generated", change_batches=2)
    landing, lake, health = tmp_path / "landing", tmp_path / "lake", tmp_path / "health.json"
    conf, generated, database = settings_for(landing, lake), open_landing(root), "continuous_0"
    project = project_with(tmp_path / "project", (TABLE,))
    stage(generated, 0, landing)
    process = start_service(landing, lake, database, health, project)
    try:
        wait_for("the snapshot", applied(spark, conf, database, 0, generated), process)
        assert health_of(health)["state"] == "polling"
        stage(generated, 1, landing)
        wait_for("change batch 1", applied(spark, conf, database, 1, generated), process)
        assert not (lake / database / "category").exists()  # not in the config: not read
        add_entries(project, (TABLE, "category"))
        category = table_path(conf, database, "category")
        wait_for("category", lambda: committed(spark, category, "tickit.ems.category"), process)
        stage(generated, 2, landing)
        changelog = timeline(conf, database, "sales_changelog")
        wait_for("batch 2 in flight", lambda: bool(in_flight(changelog)), process)
        assert stop(process) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert health_of(health)["state"] == "stopped"
    assert health_of(health)["batches"] >= 4  # the snapshot may land in two polls
    assert_exact_state(spark, conf, database, root)
    rows = spark_rows(spark, conf, database, "category")
    assert differences(rows, expected(root, "category"), "catid") == []


def compacted_since_last_batch(conf, database: str) -> Callable[[], bool]:
    """True once a completed compaction follows the table's last delta commit."""
    folder = timeline(conf, database, TABLE)
    return lambda: not needs_compaction({p.name: 0.0 for p in folder.iterdir()})


def test_killed_mid_batch_then_restarted_reaches_the_exact_state(spark, tmp_path: Path) -> None:
    """On merge-on-read bronze: the restarted service compacts once a poll finds nothing new."""
    root = make_landing(tmp_path / "generated", change_batches=2)
    landing, lake, health = tmp_path / "landing", tmp_path / "lake", tmp_path / "health.json"
    conf, generated, database = settings_for(landing, lake), open_landing(root), "continuous_1"
    project = project_with(tmp_path / "project", (TABLE,), table_type="mor")
    for batch in (0, 1):
        stage(generated, batch, landing)
    process = start_service(landing, lake, database, health, project)
    kill_when(process, lambda: bool(in_flight(timeline(conf, database, "sales"))))
    restarted = start_service(landing, lake, database, health, project)
    try:
        # Batch 2 in a commit of its own, after the base files: its changes go to log files.
        wait_for("batches 0 and 1", applied(spark, conf, database, 1, generated), restarted)
        stage(generated, 2, landing)
        wait_for("every batch", applied(spark, conf, database, 2, generated), restarted)
        wait_for(
            "the idle poll's compaction", compacted_since_last_batch(conf, database), restarted
        )
        assert stop(restarted) == 0
    finally:
        if restarted.poll() is None:
            os.killpg(restarted.pid, signal.SIGKILL)
    assert_exact_state(spark, conf, database, root)


def test_a_micro_batch_starts_the_tables_that_took_longest_first() -> None:
    """Most events wait in the longest tables: they start first, ties in config order."""
    tables = list(load_tables().values())
    memory = {table.name: TableMemory() for table in tables}
    assert longest_first(tables, memory) == tables  # nothing measured yet: config order
    for name, seconds in (("listing", 10.1), ("sales", 9.3), ("users", 9.3), ("date", 3.4)):
        memory[name].seconds = seconds
    assert [t.name for t in longest_first(tables, memory)] == [
        "listing", "sales", "users", "date", "category", "event", "venue"
    ]  # fmt: skip
