"""How fresh a page's marts are: the newest source change they reflect, and its age.

A job's dbt step records, per bronze table, the newest source commit time the
table held when dbt started (`DbtDetail.data_as_of`): what the models built
then reflect at least. A page's "data as of" is the newest of those over the
bronze tables its marts are built from, found upstream of each mart in dbt's
manifest (a table's changelog counts as the table). Plain Python, so it is
testable without Streamlit. Why a job record and not a mart column: decision 0019.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingestion.settings import Settings


@dataclass(frozen=True)
class MartsAsOf:
    """The newest source change a page's marts reflect, and the build that put it there."""

    data_as_of: str  # UTC, as `lakehouse status` writes it
    age_seconds: float
    behind: bool  # older than the `freshness_warn_hours` setting
    job: str  # the job whose dbt step built the marts
    built_at: str  # when that job started


def _last_build(home: Path) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The newest job record with a successful dbt step that recorded its data time."""
    paths = (home / "runs").glob("job-*.json")
    records = sorted(paths, key=lambda path: (path.stat().st_mtime, path.name))
    for path in reversed(records):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for step in reversed(record.get("steps") or []):
            detail = step.get("detail") or {}
            if step.get("status") == "success" and detail.get("data_as_of"):
                return record, detail["data_as_of"]
    return None


def upstream_tables(manifest: Path, marts: tuple[str, ...]) -> set[str] | None:
    """The bronze tables the marts are built from, per dbt's manifest; None without one."""
    try:
        parents: dict[str, list[str]] = json.loads(manifest.read_text())["parent_map"]
    except (OSError, ValueError, KeyError):
        return None
    todo = [node for node in parents if node.startswith("model.") and node.split(".")[-1] in marts]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += parents.get(node, [])
    sources = (node.split(".")[-1] for node in seen if node.startswith("source."))
    return {name.removesuffix("_changelog") for name in sources}


def marts_as_of(conf: Settings, marts: tuple[str, ...], now: float) -> MartsAsOf | None:
    """The page's marts' data time from the last build; None when no job recorded one."""
    found = _last_build(conf.home)
    if found is None:
        return None
    record, as_of = found
    tables = upstream_tables(conf.dbt_target_path / "manifest.json", marts)
    times = [time for table, time in as_of.items() if tables is None or table in tables]
    if not times:
        return None
    newest = max(times)
    moment = datetime.strptime(newest, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    age = max(0.0, now - moment.timestamp())
    behind = age > conf.freshness_warn_hours * 3600
    return MartsAsOf(newest, age, behind, str(record.get("job")), str(record.get("started_at")))
