"""The engine's pure steps, no Spark: planning from a listing, counts, results, run records."""

from __future__ import annotations

import contextlib
import json
import os

import pytest

from ingestion import hudi_timeline
from ingestion.checkpoint import Checkpoint, oldest
from ingestion.commits import StoredRange, repeatable_range
from ingestion.continuous import Pacing
from ingestion.hudi_timeline import newest_completed
from ingestion.hudi_writer import parallelism
from ingestion.profile import StepTiming
from ingestion.results import BatchCounts, BronzeCounts, IngestRun, TableResult
from ingestion.sources.landing import LandingFile, plan_files

TOPIC = "tickit.ecomm.sale"
LISTED = [
    LandingFile(0, 0, "/l/s+0+0000000000.json", "json"),
    LandingFile(0, 10, "/l/s+0+0000000010.avro", "avro"),
    LandingFile(1, 0, "/l/s+1+0000000000.json", "json"),
    LandingFile(1, 7, "/l/s+1+0000000007.json", "json"),
]


def test_a_new_table_plans_every_listed_file() -> None:
    batch = plan_files(TOPIC, LISTED, {})
    assert batch.items == tuple(LISTED)
    assert batch.checkpoint == Checkpoint(TOPIC, {0: 10, 1: 7}, tuple(f.path for f in LISTED))
    assert not batch.empty


def test_the_plan_starts_past_the_committed_offsets() -> None:
    batch = plan_files(TOPIC, LISTED, {0: 0, 1: 7})
    assert batch.items == (LISTED[1],)
    assert batch.checkpoint == Checkpoint(TOPIC, {0: 10, 1: 7}, ("/l/s+0+0000000010.avro",))


def test_nothing_new_plans_an_empty_batch_keeping_the_offsets() -> None:
    batch = plan_files(TOPIC, LISTED, {0: 10, 1: 7})
    assert batch.empty
    assert batch.checkpoint == Checkpoint(TOPIC, {0: 10, 1: 7}, ())


def test_only_listed_partitions_are_carried_into_the_checkpoint() -> None:
    batch = plan_files(TOPIC, LISTED[:2], {0: 0, 5: 99})
    assert batch.checkpoint.offsets == {0: 10}


def test_the_older_checkpoint_wins_so_the_table_behind_catches_up() -> None:
    bronze = Checkpoint(TOPIC, {0: 10, 1: 7})
    changelog = Checkpoint(TOPIC, {0: 10, 1: 0, 2: 3})
    assert oldest([bronze, changelog]) == {0: 10, 1: 0, 2: -1}
    assert oldest([Checkpoint(TOPIC), Checkpoint(TOPIC)]) == {}
    batch = plan_files(TOPIC, LISTED, oldest([bronze, changelog]))
    assert batch.items == (LISTED[3],)
    assert batch.checkpoint.offsets == {0: 10, 1: 7}


@pytest.mark.parametrize(
    ("exists", "stored_last", "first", "last", "looked_up"),
    [
        (False, None, "05", "09", None),
        (True, "04", "05", "09", None),  # every event after every stored one
        (True, None, "05", "09", None),  # nothing recorded or read: no stored row
        (True, "09", "05", "09", StoredRange("05", "09")),  # a rerun, another key at a position
        (True, "10", "05", "09", StoredRange("05", "10")),
        (True, "06", "05", "09", StoredRange("05", "06")),  # a few redelivered events
    ],
)
def test_the_changelog_looks_up_only_the_events_at_or_before_its_last_position(
    exists: bool, stored_last: str | None, first: str, last: str, looked_up: StoredRange | None
) -> None:
    counts = BatchCounts(ops={"u": 2}, first_position=first, last_position=last)
    assert repeatable_range(exists, stored_last, counts) == looked_up


def test_batch_counts_from_one_aggregation() -> None:
    counts = BatchCounts.from_rows(
        [
            ("flavour", "envelope", 9),
            ("flavour", "tombstone", 2),
            ("flavour", "bad", 1),
            ("op", "u", 3),
            ("op", "c", 5),
            ("op", "t", 1),
            ("reject", "", 2),
        ]
    )
    assert counts == BatchCounts(
        {"bad": 1, "envelope": 9, "tombstone": 2}, {"c": 5, "t": 1, "u": 3}, 2
    )
    assert (counts.tombstones, counts.truncates, counts.only_inserts) == (2, 1, False)
    assert BatchCounts.from_rows([("op", "r", 4), ("op", "c", 1)]).only_inserts
    assert BatchCounts.from_rows([]) == BatchCounts({}, {}, 0)
    with pytest.raises(ValueError, match="unknown count kind 'x'"):
        BatchCounts.from_rows([("x", "", 1)])


def test_a_table_result_from_its_counts() -> None:
    batch = BatchCounts({"envelope": 9, "tombstone": 2}, {"c": 5, "d": 1, "u": 3}, 2)
    bronze = BronzeCounts.from_totals(rows=8, deleted=1)
    assert bronze == BronzeCounts(upserted=7, deleted=1)
    result = TableResult.applied("sales", 3, batch, bronze, seconds=2.0)
    assert result == TableResult(
        table="sales",
        files=3,
        events={"c": 5, "d": 1, "u": 3},
        tombstones=2,
        upserted=7,
        deleted=1,
        quarantined=2,
        seconds=2.0,
        committed=True,
    )
    assert (result.total_events, result.events_per_second) == (9, 4.5)


def test_the_ingest_run_record_keeps_every_field() -> None:
    write = StepTiming("bronze write", 1.5, 3, {"hudi_metadata_table": 0.4})
    sales = TableResult("sales", 3, {"c": 5, "u": 3}, 1, 8, 0, 2, 2.0, True, (write,))
    users = TableResult("users", seconds=0.5)
    session = StepTiming("spark session", 4.0)
    run = IngestRun(
        "2026-01-01 00:00:00.000000", 2.5, "/landing", "/lake", (sales, users), (session,)
    )
    assert (run.events, run.files, run.quarantined, run.touched) == (8, 3, 2, ["sales"])
    assert json.loads(run.to_json()) == {
        "started_at": "2026-01-01 00:00:00.000000",
        "seconds": 2.5,
        "landing": "/landing",
        "lake": "/lake",
        "tables": [
            {"table": "sales", "files": 3, "events": {"c": 5, "u": 3}, "tombstones": 1,
             "upserted": 8, "deleted": 0, "quarantined": 2, "seconds": 2.0, "committed": True,
             "profile": [{"step": "bronze write", "seconds": 1.5, "spark_jobs": 3,
                          "detail": {"hudi_metadata_table": 0.4}}],
             "events_per_second": 4.0},
            {"table": "users", "files": 0, "events": {}, "tombstones": 0, "upserted": 0,
             "deleted": 0, "quarantined": 0, "seconds": 0.5, "committed": False,
             "profile": [], "events_per_second": 0.0},
        ],
        "steps": [{"step": "spark session", "seconds": 4.0, "spark_jobs": 0, "detail": {}}],
    }  # fmt: skip


def test_the_newest_completed_commit_is_the_tables_version() -> None:
    files = {
        "20260101000000100.commit.requested": 1.0,
        "20260101000000100.inflight": 2.0,
        "20260101000000100_20260101000005000.commit": 3.0,
        "20260101000009000.commit.requested": 4.0,
        "20260101000009000.inflight": 5.0,  # in flight: not a version yet
        "20260101000001000_20260101000002000.clean": 6.0,
    }
    assert newest_completed(files) == "20260101000000100_20260101000005000.commit"
    assert newest_completed({}) is None


def test_write_parallelism_follows_the_batch() -> None:
    assert [parallelism(n, 4) for n in (0, 3, 250_000, 250_001, 10**8)] == [1, 1, 1, 2, 4]


def test_pacing_keeps_the_min_sync_interval_and_polls_when_idle() -> None:
    pacing = Pacing(poll_seconds=1.0, min_sync_seconds=5.0)
    committed = IngestRun("t", 2.0, "/l", "/k", (TableResult("sales", committed=True),))
    idle = IngestRun("t", 0.2, "/l", "/k", (TableResult("sales"),))
    assert pacing.wait_after(committed, started=100.0, now=102.0) == 3.0
    assert pacing.wait_after(committed, started=100.0, now=107.0) == 0.0
    assert pacing.wait_after(idle, started=100.0, now=100.2) == pytest.approx(0.8)


def test_a_timeline_file_removed_while_listed_is_left_out(tmp_path, monkeypatch) -> None:
    """An instant archived between the listing and its stat is skipped, as Hadoop skips it,
    and the folder still lists: a table seen as absent would be created anew."""
    kept = tmp_path / "20260101000000100_20260101000005000.commit"
    kept.write_text("{}")
    (tmp_path / ".20260101000000100_20260101000005000.commit.crc").write_text("")
    archived = tmp_path / "20250101000000100_20250101000005000.commit"
    archived.write_text("{}")
    listed = list(os.scandir(tmp_path))
    archived.unlink()
    monkeypatch.setattr(hudi_timeline.os, "scandir", lambda _: contextlib.nullcontext(listed))
    assert list(hudi_timeline._local_mtimes(tmp_path) or {}) == [kept.name]
