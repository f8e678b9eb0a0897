"""Run records of jobs and their steps, and the failure notification that sends them.

A record is a dataclass while the job runs and JSON on disk
(`.lakehouse/runs/job-<name>-<time>.json`). Each step kind has its own typed
detail, so a reader asks for what an ingest step did by its kind, never by the
step's name in conf/jobs.yml (which users rename freely).

A run that fails is recorded too: status "failed", its seconds, and its error
as the one line `lakehouse` prints (`failed_run`, `JobRecord.error`).
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ingestion.results import IngestRun, TableResult
from ingestion.settings import Settings
from lakehouse.errors_text import error_text


@dataclass(frozen=True)
class TableTotals:
    """One table's line in an ingest step's record."""

    files: int
    events: int
    upserted: int
    deleted: int
    quarantined: int

    @classmethod
    def of(cls, result: TableResult) -> TableTotals:
        return cls(
            files=result.files,
            events=result.total_events,
            upserted=result.upserted,
            deleted=result.deleted,
            quarantined=result.quarantined,
        )


@dataclass(frozen=True)
class IngestDetail:
    """What an ingest step applied, per table."""

    tables: dict[str, TableTotals]
    warning: str = ""  # set when records were quarantined (kept with their reason)

    @classmethod
    def of(cls, run: IngestRun) -> IngestDetail:
        warning = f"{run.quarantined} record(s) quarantined" if run.quarantined else ""
        return cls({r.table: TableTotals.of(r) for r in run.tables}, warning)

    @property
    def events(self) -> int:
        return sum(t.events for t in self.tables.values())


@dataclass(frozen=True)
class DbtDetail:
    """The dbt command a step ran and, when dbt wrote them, its node counts."""

    command: str
    nodes: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    # Per bronze table, the newest source commit time it held when dbt started:
    # what the models built then reflect at least (the dashboard's "data as of").
    data_as_of: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SkippedDetail:
    """Why a step had nothing to do."""

    reason: str


@dataclass(frozen=True)
class MaintainDetail:
    """What a maintain step did: the tables it compacted and clustered, of those it looked at."""

    compacted: tuple[str, ...]
    clustered: tuple[str, ...]
    looked_at: int


StepDetail = IngestDetail | DbtDetail | MaintainDetail | SkippedDetail


@dataclass
class StepRecord:
    name: str
    status: str = "pending"
    seconds: float = 0.0
    detail: StepDetail | None = None
    error: str = ""


@dataclass
class JobRecord:
    job: str
    started_at: str
    status: str = "running"
    seconds: float = 0.0
    steps: list[StepRecord] = field(default_factory=list)
    record: str = ""
    error: str = ""  # why it failed: its failed step's error, or what stopped it outside one

    @property
    def ingested_events(self) -> int:
        """Events applied by every ingest step, whatever the steps are called."""
        return sum(s.detail.events for s in self.steps if isinstance(s.detail, IngestDetail))


def to_dict(record: JobRecord | StepRecord) -> dict[str, Any]:
    """The record as JSON-ready values (nested dataclasses included)."""
    return asdict(record)


def write_record(path: Path, record: JobRecord) -> None:
    path.write_text(json.dumps(to_dict(record), indent=2))


def read_record(path: Path) -> JobRecord:
    """A record `write_record` wrote, typed again: each step's detail by its own fields.

    For a reader in another process than the job's (the test suite reads the
    record of the `make run` it started).
    """
    data = json.loads(path.read_text())
    steps = [StepRecord(**{**step, "detail": _detail(step["detail"])}) for step in data["steps"]]
    return JobRecord(**{**data, "steps": steps})


def _detail(data: dict[str, Any] | None) -> StepDetail | None:
    if data is None:
        return None
    if "tables" in data:
        tables = {name: TableTotals(**totals) for name, totals in data["tables"].items()}
        return IngestDetail(tables, data["warning"])
    if "compacted" in data:
        return MaintainDetail(tuple(data["compacted"]), tuple(data["clustered"]), data["looked_at"])
    if "command" in data:
        return DbtDetail(**data)
    return SkippedDetail(**data)


def failed_run(started_at: str, seconds: float, error: BaseException, **context: Any) -> str:
    """The JSON record of a run that failed: status, when, how long, the context, why.

    The error is the line `lakehouse` prints for it (a Spark failure's root cause).
    """
    record = {"status": "failed", "started_at": started_at, "seconds": round(seconds, 1)}
    return json.dumps({**record, **context, "error": error_text(error)}, indent=2)


def notify(conf: Settings, record: JobRecord, path: Path, log: Callable[[str], None]) -> None:
    """Tell someone a job failed: the configured command and/or webhook."""
    if conf.notify_command:
        env = {
            **os.environ,
            "LAKEHOUSE_JOB": record.job,
            "LAKEHOUSE_JOB_STATUS": record.status,
            "LAKEHOUSE_JOB_RECORD": str(path),
        }
        done = subprocess.run(conf.notify_command, shell=True, env=env, check=False)
        log(f"notified: command exited {done.returncode}")
    if conf.notify_url:
        request = urllib.request.Request(
            conf.notify_url,
            data=path.read_bytes(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                log(f"notified: webhook answered {response.status}")
        except OSError as error:
            log(f"notification webhook failed: {error}")
