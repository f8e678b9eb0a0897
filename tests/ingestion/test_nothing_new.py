"""The JVM-free look ahead: nothing new only when the engine would find nothing new, and how
much is new otherwise, which sizes the one-shot driver's JIT.

Timelines here are written as Hudi 1.x writes completed commits (an Avro
HoodieCommitMetadata with the checkpoint in its extra metadata), with only the
fields the check reads; the crash tests check it on real Hudi tables.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingestion.hudi_timeline import timeline_folder
from ingestion.nothing_new import STEP, look_ahead, nothing_new
from ingestion.paths import TablePaths
from ingestion.settings import Settings
from ingestion.spark import QUICK_JIT, for_batch

from .bronze import make_landing, settings_for, tables_for
from .timeline import commit, sink_file

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))


@pytest.fixture
def current(tmp_path: Path) -> tuple[Settings, list, TablePaths]:
    """One table whose bronze and changelog both committed the landing's two files."""
    conf = settings_for(tmp_path / "landing", tmp_path / "lake")
    tables = tables_for("quick", ("category",))
    topic, paths = tables[0].topic, TablePaths.of(conf, tables[0])
    for offset in (0, 5):
        sink_file(tmp_path / "landing", topic, offset)
    for table in (paths.bronze, paths.changelog):
        commit(Path(table), "20261125100000000", {0: 0}, topic)
        commit(Path(table), "20261125110000000", {0: 5}, topic)
    return conf, tables, paths


def test_nothing_new_is_told_with_every_table_in_the_record(current) -> None:
    conf, tables, _ = current
    run = nothing_new(conf, tables)
    assert run is not None and run.events == 0 and run.touched == []
    assert [(r.table, r.committed, r.files) for r in run.tables] == [("category", False, 0)]
    assert [step.step for step in run.steps] == [STEP]


def test_a_new_file_is_left_to_the_engine(current, tmp_path: Path) -> None:
    conf, tables, _ = current
    sink_file(tmp_path / "landing", tables[0].topic, 9)
    assert nothing_new(conf, tables) is None


def test_the_look_ahead_counts_only_the_new_files_and_their_bytes(current, tmp_path) -> None:
    conf, tables, _ = current
    new = sink_file(tmp_path / "landing", tables[0].topic, 9, text='{"op": "c"}\n' * 3)
    look = look_ahead(conf, tables)
    assert look is not None and look.nothing_new_run(conf) is None
    assert [(t.table, t.files, t.bytes) for t in look.tables] == [
        ("category", 1, new.stat().st_size)
    ]
    assert look.new_bytes == new.stat().st_size


def test_only_a_known_small_batch_gets_the_quick_jit(current) -> None:
    conf = dataclasses.replace(current[0], job_java_options="-Xss4m", quick_jit_max_mb=1)
    assert for_batch(conf, 1024**2).job_java_options == f"-Xss4m {QUICK_JIT}"
    assert for_batch(conf, 1024**2 + 1) == conf  # larger than quick_jit_max_mb
    assert for_batch(conf, None) == conf  # not known (a Kafka source, a remote landing)
    never = dataclasses.replace(conf, quick_jit_max_mb=0)
    assert for_batch(never, 1) == never
    given = dataclasses.replace(conf, job_java_options=QUICK_JIT)
    assert for_batch(given, 1) == given  # never twice


def test_a_bronze_behind_its_changelog_is_left_to_the_engine(current) -> None:
    """A crash between the changelog's commit and the bronze's: bronze must catch up."""
    conf, tables, paths = current
    newest = sorted(timeline_folder(Path(paths.bronze)).iterdir())[-1]
    newest.unlink()
    assert nothing_new(conf, tables) is None


def test_a_commit_without_a_checkpoint_is_walked_past(current) -> None:
    conf, tables, paths = current
    commit(Path(paths.bronze), "20261125120000000", None, tables[0].topic)
    assert nothing_new(conf, tables) is not None


def test_a_torn_commit_file_is_left_to_the_engine(current) -> None:
    conf, tables, paths = current
    torn = commit(Path(paths.bronze), "20261125120000000", {0: 5}, tables[0].topic)
    torn.write_bytes(torn.read_bytes()[:20])
    assert nothing_new(conf, tables) is None


@pytest.mark.parametrize("stray", ["notes.txt", "tickit.ems.category+0+0000000003.json"])
def test_a_file_the_engine_warns_about_is_left_to_it(current, tmp_path: Path, stray) -> None:
    """A file that is not the topic's, or an empty sink file: the engine says why, each run."""
    conf, tables, _ = current
    folder = next((tmp_path / "landing" / "topics" / tables[0].topic).rglob("day=*"))
    (folder / stray).touch()
    assert nothing_new(conf, tables) is None


def test_remote_stores_and_kafka_sources_are_left_to_the_engine(current) -> None:
    conf, tables, _ = current
    assert nothing_new(dataclasses.replace(conf, lake="s3a://bucket/lake"), tables) is None
    kafka = dataclasses.replace(tables[0].source, kind="kafka")
    assert nothing_new(conf, [dataclasses.replace(tables[0], source=kafka)]) is None


def test_no_table_and_no_files_is_nothing_new(tmp_path: Path) -> None:
    conf = settings_for(tmp_path / "landing", tmp_path / "lake")
    assert nothing_new(conf, tables_for("quick", ("category", "sales"))) is not None


def ingest_category(landing: str, lake: str, database: str, **settings: str) -> tuple[str, dict]:
    """`lakehouse ingest --tables category`, which must exit 0: its summary line and run record.

    `settings` are extra LAKEHOUSE_* variables, e.g. job_java_options="".
    """
    env = {
        **os.environ,
        "LAKEHOUSE_LANDING": landing,
        "LAKEHOUSE_LAKE": lake,
        "LAKEHOUSE_BRONZE_DATABASE": database,
        **{f"LAKEHOUSE_{name.upper()}": value for name, value in settings.items()},
    }
    done = subprocess.run(
        [LAKEHOUSE, "ingest", "--tables", "category"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    return summary, json.loads(Path(summary.rsplit("run record ", 1)[1]).read_text())


def test_lakehouse_ingest_with_nothing_new_starts_no_spark(local_stack, current, tmp_path) -> None:
    """The command prints its usual summary and record; the record's only step is the check."""
    conf, _, _ = current
    summary, record = ingest_category(conf.landing, conf.lake, "quick")
    assert summary.startswith("ingested 0 events from 0 files into 0 table(s)"), summary
    assert [step["step"] for step in record["steps"]] == [STEP]
    assert [(t["table"], t["committed"]) for t in record["tables"]] == [("category", False)]


def test_lakehouse_ingest_of_a_small_batch_runs_its_driver_on_the_quick_jit(
    local_stack, tmp_path
) -> None:
    """With no JIT option given (the suite gives the quick JIT to every job), a small batch
    starts its JVM with it: the JVM's own arguments, in the run record's first step."""
    landing = make_landing(tmp_path / "landing", scale=0.001)
    _, record = ingest_category(
        str(landing), str(tmp_path / "lake"), "quick_jit", job_java_options=""
    )
    assert [(s["step"], s["detail"]) for s in record["steps"]] == [
        ("spark session", {"quick_jit": 1.0})
    ]
    assert [(t["table"], t["committed"]) for t in record["tables"]] == [("category", True)]
