"""Typed step records: what they serialize to, and event totals found by step kind, not name."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from ingestion.config import TableConfig
from ingestion.errors import UserError
from ingestion.results import IngestRun, TableResult
from ingestion.settings import settings
from lakehouse.main_job import closing_message
from lakehouse.scheduler.records import (
    DbtDetail,
    IngestDetail,
    JobRecord,
    MaintainDetail,
    SkippedDetail,
    StepRecord,
    TableTotals,
    read_record,
    to_dict,
    write_record,
)
from lakehouse.scheduler.run import run_job

SALES = TableResult("sales", 2, {"c": 3, "u": 2, "d": 1}, 0, 4, 1, 2, 1.0, True)
USERS = TableResult("users", 1, {"r": 4}, 0, 4, 0, 0, 1.0, True)


def _run(tables: tuple[TableResult, ...]) -> IngestRun:
    return IngestRun("2026-01-01 00:00:00.000000", 1.0, "/landing", "/lake", tables)


def test_an_ingest_detail_totals_each_table_and_warns_of_quarantined_records() -> None:
    detail = IngestDetail.of(_run((SALES, USERS)))
    assert detail == IngestDetail(
        {"sales": TableTotals(2, 6, 4, 1, 2), "users": TableTotals(1, 4, 4, 0, 0)},
        "2 record(s) quarantined",
    )
    assert detail.events == 10
    assert IngestDetail.of(_run((USERS,))).warning == ""


AS_OF = "2026-01-01T00:00:00.000Z"


def test_step_records_serialize_to_json_and_read_back_with_their_typed_detail(
    tmp_path: Path,
) -> None:
    record = JobRecord(
        job="daily",
        started_at="2026-01-01T00:00:00+00:00",
        status="success",
        steps=[
            StepRecord("ingest", "success", 1.5, IngestDetail.of(_run((SALES,)))),
            StepRecord(
                "build",
                "success",
                2.0,
                DbtDetail("dbt build", 3, {"pass": 3}, {"model": 3}, {"sales": AS_OF}),
            ),
            StepRecord("hourly", "skipped", 0.0, SkippedDetail("no new data in any dbt source")),
        ],
    )
    assert json.loads(json.dumps(to_dict(record)))["steps"] == [
        {"name": "ingest", "status": "success", "seconds": 1.5, "error": "",
         "detail": {"tables": {"sales": {"files": 2, "events": 6, "upserted": 4, "deleted": 1,
                                         "quarantined": 2}},
                    "warning": "2 record(s) quarantined"}},
        {"name": "build", "status": "success", "seconds": 2.0, "error": "",
         "detail": {"command": "dbt build", "nodes": 3, "statuses": {"pass": 3},
                    "kinds": {"model": 3}, "data_as_of": {"sales": AS_OF}}},
        {"name": "hourly", "status": "skipped", "seconds": 0.0, "error": "",
         "detail": {"reason": "no new data in any dbt source"}},
    ]  # fmt: skip
    # Read back, with the kinds not above: a maintain step and a failed one without detail.
    whole = dataclasses.replace(record, steps=[
        *record.steps,
        StepRecord("maintain", "success", 0.5, MaintainDetail(("sales",), (), 7)),
        StepRecord("docs", "failed", 0.1, None, "dbt docs generate exited 2"),
    ])  # fmt: skip
    write_record(tmp_path / "run.json", whole)
    assert read_record(tmp_path / "run.json") == whole


def test_a_renamed_ingest_step_still_reports_its_events(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.yml"
    jobs.write_text(
        "jobs:\n"
        "  renamed:\n"
        "    schedule: '@daily'\n"
        "    steps:\n"
        "      - {name: load-bronze, run: ingest, tables: [sales, users]}\n"
    )
    conf = dataclasses.replace(settings(), jobs_file=jobs, home=tmp_path / "home")
    asked: list[list[str]] = []

    def engine(tables: list[TableConfig]) -> IngestRun:
        asked.append([t.name for t in tables])
        return _run((SALES, USERS))

    record = run_job("renamed", conf, log=lambda _: None, ingestor=engine)
    assert asked == [["sales", "users"]]
    assert [(s.name, s.status) for s in record.steps] == [("load-bronze", "success")]
    assert record.ingested_events == 10
    message = closing_message(conf, record, "http://docs", "http://board", 12.0)
    assert message.startswith("done in 12s: 10 events in bronze, marts built.\n")
    on_disk = json.loads(Path(record.record).read_text())
    assert on_disk["steps"][0]["detail"]["tables"]["sales"]["events"] == 6


def _jobs_conf(tmp_path: Path):
    jobs = tmp_path / "jobs.yml"
    jobs.write_text(
        "jobs:\n"
        "  loader:\n"
        "    schedule: '@daily'\n"
        "    steps:\n"
        "      - {name: load, run: ingest, tables: [sales]}\n"
        "      - {name: never, run: dbt, args: [--version]}\n"
    )
    return dataclasses.replace(settings(), jobs_file=jobs, home=tmp_path / "home")


def _records(conf, pattern: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((conf.home / "runs").glob(pattern))]


def test_a_step_that_fails_in_spark_records_its_root_cause(tmp_path: Path) -> None:
    from tests.platform.java_fakes import ANCIENT, FakeThrowable, Py4JJavaError, hudi_failure

    conf = _jobs_conf(tmp_path)

    def engine(tables: list[TableConfig]) -> IngestRun:
        raise Py4JJavaError(hudi_failure(FakeThrowable("o.a.s.SparkUpgradeException", ANCIENT)))

    record = run_job("loader", conf, log=lambda _: None, ingestor=engine)
    [on_disk] = _records(conf, "job-loader-*.json")
    assert on_disk["status"] == record.status == "failed"
    [step] = on_disk["steps"]
    assert step["status"] == "failed"
    assert step["error"].startswith(
        "SparkUpgradeException: [INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME] "
    )
    assert "datetimeRebaseModeInWrite=CORRECTED" in step["error"]
    assert on_disk["error"] == f"step load: {step['error']}"


def test_a_job_stopped_outside_its_steps_still_writes_a_failed_record(tmp_path: Path) -> None:
    conf = _jobs_conf(tmp_path)
    with pytest.raises(UserError, match=re.escape("unknown job 'nope/../x'")):
        run_job("nope/../x", conf, log=lambda _: None)
    [unknown] = _records(conf, "job-nope_.._x-*.json")
    assert unknown["status"] == "failed" and unknown["steps"] == []
    assert unknown["error"].startswith("unknown job 'nope/../x'; known: loader")
    assert unknown["seconds"] >= 0

    def interrupted(tables: list[TableConfig]) -> IngestRun:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job("loader", conf, log=lambda _: None, ingestor=interrupted)
    [stopped] = _records(conf, "job-loader-*.json")
    assert (stopped["status"], stopped["error"]) == ("failed", "KeyboardInterrupt")


def test_lakehouse_run_failing_before_its_job_writes_a_failed_record(monkeypatch) -> None:
    from lakehouse import main_job

    def stack_up(*_: object, **__: object) -> None:
        raise UserError("the catalog would not start: see .lakehouse/run/catalog.log")

    runs = settings().home / "runs"
    before = set(runs.glob("main-*.json"))
    monkeypatch.setattr(main_job.stack, "up", stack_up)
    with pytest.raises(UserError, match="the catalog would not start"):
        main_job.run_main_job(scale=0.01, log=lambda _: None)
    [path] = set(runs.glob("main-*.json")) - before
    record = json.loads(path.read_text())
    assert record["status"] == "failed" and record["scale"] == 0.01
    assert record["error"] == "the catalog would not start: see .lakehouse/run/catalog.log"
    assert record["seconds"] >= 0
