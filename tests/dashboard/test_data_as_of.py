"""A page's "data as of": the last build's recorded data times, upstream of its marts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from dashboard.data_as_of import marts_as_of, upstream_tables
from ingestion.settings import load_settings

# A manifest's parent map: fct_sales <- stg_sales <- sales; dim_users <- the users changelog.
PARENTS = {
    "model.p.fct_sales": ["model.p.stg_sales", "model.p.dim_dates"],
    "model.p.stg_sales": ["source.p.tickit.sales"],
    "model.p.dim_dates": ["source.p.tickit.date"],
    "model.p.dim_users": ["model.p.int_users"],
    "model.p.int_users": ["source.p.tickit.users_changelog"],
    "source.p.tickit.sales": [],
    "source.p.tickit.date": [],
    "source.p.tickit.users_changelog": [],
}
AS_OF = {"sales": "2026-12-01T10:00:00.000Z", "date": "2026-11-30T00:00:00.000Z",
         "users": "2026-12-01T11:30:00.250Z"}  # fmt: skip
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp()


def _project(tmp_path: Path, records: list[dict]) -> object:
    target = tmp_path / "target"
    target.mkdir()
    (target / "manifest.json").write_text(json.dumps({"parent_map": PARENTS}))
    (tmp_path / "runs").mkdir()
    for number, record in enumerate(records):
        path = tmp_path / "runs" / f"job-daily-20261201T00000{number}.json"
        path.write_text(json.dumps(record))
    return load_settings(
        {"home": str(tmp_path), "dbt_target_path": str(target), "freshness_warn_hours": "1"}
    )


def _job(status: str, as_of: dict[str, str], started_at: str) -> dict:
    steps = [
        {"name": "ingest", "status": "success", "detail": {"tables": {}}},
        {"name": "build", "status": status, "detail": {"command": "build", "data_as_of": as_of}},
    ]
    return {"job": "daily", "started_at": started_at, "status": status, "steps": steps}


def test_upstream_tables_follow_the_manifest_to_the_sources(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"parent_map": PARENTS}))
    assert upstream_tables(manifest, ("fct_sales",)) == {"sales", "date"}
    assert upstream_tables(manifest, ("dim_users",)) == {"users"}
    assert upstream_tables(tmp_path / "missing.json", ("fct_sales",)) is None


def test_the_newest_upstream_time_of_the_last_successful_build(tmp_path: Path) -> None:
    older = {table: "2026-11-01T00:00:00.000Z" for table in AS_OF}
    newer = {"sales": "2026-12-01T11:59:00.000Z"}
    builds = [_job("success", older, "first"), _job("success", AS_OF, "second")]
    conf = _project(tmp_path, [*builds, _job("failed", newer, "third")])
    sales = marts_as_of(conf, ("fct_sales",), NOW)
    assert (sales.data_as_of, sales.age_seconds, sales.behind) == (AS_OF["sales"], 7200.0, True)
    assert (sales.job, sales.built_at) == ("daily", "second")
    users = marts_as_of(conf, ("dim_users",), NOW)
    assert (users.data_as_of, users.age_seconds, users.behind) == (AS_OF["users"], 1799.75, False)


def test_no_recorded_build_is_none(tmp_path: Path) -> None:
    conf = _project(tmp_path, [_job("failed", AS_OF, "first")])
    assert marts_as_of(conf, ("fct_sales",), NOW) is None
