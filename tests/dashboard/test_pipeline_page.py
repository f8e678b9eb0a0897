"""The Pipeline page in a real browser, over a lake of its own.

Two TICKIT tables are ingested into a home, landing zone, lake and bronze
database of this module's (so the session's lake keeps its state), one line
of the category topic is not JSON, and one ingest is broken on purpose (it
asks for a table nobody serves). Headless Chromium then opens the page and
finds each: the freshness line against the bronze table's own
`max(_cdc_source_ts)`, the quarantined line with its reason, the failed run
with its error beside the run that applied the events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from dashboard import pipeline
from ingestion.errors import UserError
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import Settings, load_settings
from lakehouse.ingest_command import run_ingest, run_once
from lakehouse.services import dashboard_server
from tests.conftest import SCREENSHOTS, free_port
from tests.dashboard.browser import render, screenshot, tables
from tests.ingestion.bronze import make_landing, tables_for
from tests.ingestion.timeline import sink_file

DATABASE = "pipeline_bronze"
BAD_LINE = "this is not json"
UNKNOWN = "no_such_table"


def _environment(conf: Settings) -> dict[str, str]:
    """What points `lakehouse ingest` at this module's home, landing, lake and database."""
    names = {"home": conf.home, "landing": conf.landing, "lake": conf.lake}
    return {
        **{f"LAKEHOUSE_{name.upper()}": str(value) for name, value in names.items()},
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
    }


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A failed ingest, then category and venue ingested with one line quarantined."""
    home = tmp_path_factory.mktemp("pipeline")
    landing = make_landing(home / "landing", change_batches=0)
    sink_file(landing, "tickit.ems.category", 10**6, BAD_LINE + "\n")
    conf = load_settings(
        {"home": str(home), "landing": str(landing), "lake": str(home / "lake"),
         "bronze_database": DATABASE, "dashboard_port": free_port()}
    )  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        for name, value in _environment(conf).items():
            patch.setenv(name, value)
        with pytest.raises(UserError, match=UNKNOWN):
            run_ingest(tables=[UNKNOWN])
    assert run_once(spark, conf, tables_for(DATABASE, ("category", "venue")), (), False) == 3
    return conf


@pytest.fixture(scope="module")
def served(lake: Settings) -> Iterator[str]:
    url = dashboard_server.up(lake, log=lambda _: None)
    try:
        yield url
    finally:
        dashboard_server.down(lake, log=lambda _: None)


def _newest_source_ms(spark, conf: Settings, table: str) -> int:
    frame = spark.read.format("hudi").load(to_hadoop_uri(table_path(conf, DATABASE, table)))
    return frame.agg(F.unix_millis(F.max("_cdc_source_ts"))).first()[0]


def _utc_ms(text: str) -> int:
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def _table(found: list[dict], header: str) -> list[dict[str, str]]:
    """The rows of the one table with this column."""
    (match,) = [table for table in found if header in table["headers"]]
    return match["rows"]


def test_pipeline_page_shows_freshness_quarantine_and_the_failed_run(
    spark, lake: Settings, served: str, browser
) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    rendered = render(page, served + "pipeline", 1)
    screenshot(page, SCREENSHOTS / "dashboard-pipeline.png")
    assert rendered.exceptions == [] and rendered.alerts == []
    assert rendered.charts[0]["marks"] >= 1
    found = tables(page)

    status = {row["table"]: row for row in _table(found, "data as of")}
    category = status["category"]
    assert _utc_ms(category["data as of"]) == _newest_source_ms(spark, lake, "category")
    caption = page.get_by_text("Checked at ").inner_text()
    checked_ms = _utc_ms(re.search(r"Checked at (\S+Z)", caption)[1])
    lag = float(category["lag s"].replace(",", ""))
    assert abs(lag - (checked_ms - _utc_ms(category["data as of"])) / 1000) < 0.1
    assert category["backlog"] == "0" and category["last commit"]
    assert status["sales"]["last commit"] in ("", "None") and int(status["sales"]["backlog"]) > 0

    (reason,) = _table(found, "records")
    assert (reason["table_name"], reason["reason"], reason["records"]) == (
        "category", "line is not a JSON object", "1",
    )  # fmt: skip
    (sample,) = _table(found, "raw")
    assert sample["raw"] == BAD_LINE and sample["line"] == "0"  # lines count from 0

    # No `lakehouse reconcile` has run on this lake: the panel says how to check.
    assert page.get_by_text("No check yet").count() == 1

    runs = _table(found, "error")
    (failed,) = [run for run in runs if run["status"] == "failed"]
    assert failed["run"] == "ingest" and UNKNOWN in failed["error"]
    (applied,) = [run for run in runs if run["status"] == "success"]
    assert int(applied["events"]) == _recorded_events(lake)


def _recorded_events(conf: Settings) -> int:
    """The events the successful run's record says it applied (the runs panel's source)."""
    (record,) = [
        json.loads(path.read_text())
        for path in (conf.home / "runs").glob("ingest-*.json")
        if json.loads(path.read_text())["status"] == "success"
    ]
    return sum(sum(table["events"].values()) for table in record["tables"])


def test_runs_reads_every_kind_of_record(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    ingest = {
        "status": "success",
        "started_at": "a",
        "seconds": 2.5,
        "tables": [{"events": {"c": 2, "u": 1}}, {"events": {"r": 4}}],
    }
    steps = [{"detail": {"tables": {"sales": {"events": 5}}}}, {"detail": {"command": "build"}}]
    job = {"status": "failed", "started_at": "b", "seconds": 9.0, "error": "boom", "steps": steps}
    (runs / "ingest-20261201T000000.json").write_text(json.dumps(ingest))
    (runs / "job-daily-20261201T000001000000.json").write_text(json.dumps(job))
    check = {"status": "different", "checked_at": "c", "seconds": 4.0, "tables": []}
    (runs / "reconcile-20261201T000002000000.json").write_text(json.dumps(check))
    (runs / "ingest-continuous-20261201T000002.jsonl").write_text("{}\n")
    (runs / "notes.json").write_text("{}")
    frame = pipeline.runs(tmp_path)
    assert sorted(frame.to_dict("records"), key=lambda r: r["started_at"]) == [
        {"started_at": "a", "run": "ingest", "status": "success", "seconds": 2.5, "events": 7,
         "error": ""},
        {"started_at": "b", "run": "job-daily", "status": "failed", "seconds": 9.0, "events": 5,
         "error": "boom"},
        {"started_at": "c", "run": "reconcile", "status": "different", "seconds": 4.0,
         "events": 0, "error": ""},
    ]  # fmt: skip
