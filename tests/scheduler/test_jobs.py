"""`lakehouse jobs run`: the daily job end to end, the lock, failure and notification."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest

from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import settings
from lakehouse.scheduler.jobs_file import load_jobs
from lakehouse.scheduler.lock import job_lock
from lakehouse.scheduler.records import MaintainDetail, SkippedDetail
from lakehouse.scheduler.run import EXIT_FAILED, EXIT_LOCKED, run_job
from lakehouse.scheduler.steps import touched_selector

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
TABLES = {"category", "date", "event", "venue", "listing", "sales", "users"}


def test_daily_job_runs_every_step_and_keeps_a_run_record(daily_job) -> None:
    assert daily_job.status == "success"
    assert [(s.name, s.status) for s in daily_job.steps] == [
        ("ingest", "success"),
        ("maintain", "success"),
        ("freshness", "success"),
        ("build", "success"),
        ("docs", "success"),
    ]
    ingest, maintain, freshness, build, _ = daily_job.steps
    tables = ingest.detail.tables
    assert set(tables) == TABLES
    assert all(t.events > 0 and t.upserted > 0 for t in tables.values())
    # Bronze is copy-on-write by default, and one batch leaves no changelog to cluster.
    assert maintain.detail == MaintainDetail(compacted=(), clustered=(), looked_at=len(TABLES))
    assert freshness.detail.statuses.keys() <= {"pass"}
    assert build.detail.nodes >= 300
    record = json.loads(Path(daily_job.record).read_text())
    assert record["status"] == "success"
    assert [s["name"] for s in record["steps"]] == [s.name for s in daily_job.steps]
    assert record["steps"][0]["detail"]["tables"]["sales"]["events"] == tables["sales"].events


def test_hourly_job_with_nothing_new_skips_the_build(daily_job, spark) -> None:
    record = run_job("hourly", settings(), log=lambda _: None, spark=spark)
    assert record.status == "success"
    ingest, _, build = record.steps
    assert all(t.files == 0 for t in ingest.detail.tables.values())
    assert build.status == "skipped"
    assert build.detail == SkippedDetail("no new data in any dbt source")


def test_status_after_the_daily_job_shows_no_backlog_and_bronze_s_own_data_time(
    daily_job, spark
) -> None:
    """`lakehouse status`'s data time is each bronze table's newest `_cdc_source_ts`."""
    done = subprocess.run(
        [LAKEHOUSE, "status", "--json"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    status = json.loads(done.stdout)
    tables = {t["table"]: t for t in status["tables"]}
    assert set(tables) == TABLES and status["behind"] == []
    assert {(t["backlog"], t["note"]) for t in tables.values()} == {(0, "")}
    conf = settings()
    for name, table in tables.items():
        path = to_hadoop_uri(table_path(conf, conf.bronze_database, name))
        newest = (
            spark.read.format("hudi")
            .load(path)
            .selectExpr("unix_millis(max(_cdc_source_ts))")
            .first()[0]
        )
        as_of = datetime.strptime(table["data_as_of"], "%Y-%m-%dT%H:%M:%S.%fZ")
        assert round(as_of.replace(tzinfo=UTC).timestamp() * 1000) == newest, name


def test_the_daily_build_records_bronze_s_data_time_as_dbt_started(daily_job, spark) -> None:
    """The dashboard's "data as of": each table's newest `_cdc_source_ts` as of the build's
    start (Hudi time travel: later tests of the group ingest more); only builds record one."""
    ingest, _, freshness, build, _ = daily_job.steps
    assert freshness.detail.data_as_of == {}
    started = datetime.fromisoformat(daily_job.started_at).astimezone(UTC)
    instant = started + timedelta(seconds=ingest.seconds + freshness.seconds)
    conf = settings()
    newest = {}
    for name in TABLES:
        path = to_hadoop_uri(table_path(conf, conf.bronze_database, name))
        frame = (
            spark.read.format("hudi")
            .option("as.of.instant", instant.strftime("%Y%m%d%H%M%S%f")[:-3])
            .load(path)
        )
        millis = frame.selectExpr("unix_millis(max(_cdc_source_ts))").first()[0]
        moment = datetime.fromtimestamp(millis / 1000, UTC)
        newest[name] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert build.detail.data_as_of == newest


def test_touched_selects_the_changed_sources_and_their_changelogs() -> None:
    assert touched_selector([]) == []
    assert touched_selector(["users", "sales"]) == [
        "source:tickit.sales+",
        "source:tickit.users+",
        "source:tickit.users_changelog+",
    ]


def test_jobs_file_declares_daily_and_hourly() -> None:
    jobs = load_jobs()
    assert [s.run for s in jobs["daily"].steps] == ["ingest", "maintain", "dbt", "dbt", "dbt"]
    assert jobs["hourly"].steps[-1].select == "touched"
    assert all(job.owner and job.schedule and job.retries >= 1 for job in jobs.values())


class _Hook(http.server.BaseHTTPRequestHandler):
    received: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        _Hook.received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[str]:
    """A loopback webhook that keeps what it was sent."""
    _Hook.received = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()
    server.server_close()


@pytest.fixture
def broken_jobs(tmp_path: Path) -> dict[str, str]:
    """A jobs file whose second step fails, with both notification hooks set."""
    jobs = tmp_path / "jobs.yml"
    jobs.write_text(
        "jobs:\n"
        "  broken:\n"
        "    schedule: '@daily'\n"
        "    steps:\n"
        "      - {name: version, run: dbt, args: [--version]}\n"
        "      - {name: missing-macro, run: dbt, args: [run-operation, no_such_macro]}\n"
        "      - {name: never, run: dbt, args: [--version]}\n"
    )
    return {
        **os.environ,
        "LAKEHOUSE_JOBS_FILE": str(jobs),
        "LAKEHOUSE_NOTIFY_COMMAND": f'cp "$LAKEHOUSE_JOB_RECORD" {tmp_path}/notified.json',
    }


def test_failing_step_exits_non_zero_records_it_and_notifies(broken_jobs, webhook, tmp_path):
    env = {**broken_jobs, "LAKEHOUSE_NOTIFY_URL": webhook}
    done = subprocess.run(
        [LAKEHOUSE, "jobs", "run", "broken"], env=env, capture_output=True, text=True
    )
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    notified = json.loads((tmp_path / "notified.json").read_text())
    assert notified["status"] == "failed"
    assert [(s["name"], s["status"]) for s in notified["steps"]] == [
        ("version", "success"),
        ("missing-macro", "failed"),
    ]
    assert "exited with" in notified["steps"][1]["error"]
    assert json.loads(Path(notified["record"]).read_text()) == notified
    assert _Hook.received == [notified]


def test_a_second_concurrent_run_is_refused_by_the_lock(broken_jobs, tmp_path) -> None:
    runs = settings().home / "runs"
    before = set(runs.glob("job-broken-*.json"))
    with job_lock(settings(), "daily"):
        done = subprocess.run(
            [LAKEHOUSE, "jobs", "run", "broken"], env=broken_jobs, capture_output=True, text=True
        )
    assert done.returncode == EXIT_LOCKED
    assert "another job is running (job daily, pid" in done.stderr
    assert set(runs.glob("job-broken-*.json")) == before
    assert not (tmp_path / "notified.json").exists()
