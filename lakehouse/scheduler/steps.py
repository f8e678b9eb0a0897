"""The step kinds of a job (`run: ingest`, `maintain`, `dbt`) and the runner that executes them.

`lakehouse jobs run` and each Airflow task (dags/lakehouse_airflow/job_step.py)
drive the same `JobRunner`, so a step means the same thing everywhere.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ingestion.config import TableConfig, select_tables
from ingestion.discovery import served_tables
from ingestion.results import IngestRun
from ingestion.settings import PROJECT_DIR, Settings
from lakehouse.dbt_wrapper import run_dbt
from lakehouse.errors_text import error_text
from lakehouse.output import console
from lakehouse.scheduler.jobs_file import Job, Step
from lakehouse.scheduler.records import (
    DbtDetail,
    IngestDetail,
    MaintainDetail,
    SkippedDetail,
    StepRecord,
)
from lakehouse.status import data_as_of

if TYPE_CHECKING:
    from ingestion.nothing_new import LookAhead

# Ingests the given tables once: the engine on the runner's Spark session, or a stand-in.
Ingestor = Callable[[list[TableConfig]], IngestRun]


def dbt_source_tables() -> set[str]:
    """The bronze tables the dbt project declares as sources (any source name)."""
    names = set()
    for path in (PROJECT_DIR / "models").rglob("_*__sources.yml"):
        for source in (yaml.safe_load(path.read_text()) or {}).get("sources", []):
            names |= {f"{source['name']}.{t['name']}" for t in source.get("tables", [])}
    return names


def touched_selector(touched: list[str]) -> list[str]:
    """dbt selectors for everything downstream of the bronze tables that changed.

    A table's changelog is committed with it, so its source counts as touched too.
    """
    tables = set(touched) | {f"{t}_changelog" for t in touched}
    wanted = [s for s in sorted(dbt_source_tables()) if s.split(".", 1)[1] in tables]
    return [f"source:{s}+" for s in wanted]


def dbt_results(target: Path, command: str, args: list[str], since: float) -> DbtDetail:
    """The command and the node counts by status from the results it wrote (if any)."""
    detail = DbtDetail(command)
    path = target / ("sources.json" if args[0] == "source" else "run_results.json")
    if not path.exists() or path.stat().st_mtime < since:
        return detail
    results: list[dict[str, Any]] = json.loads(path.read_text()).get("results", [])
    return DbtDetail(
        command=command,
        nodes=len(results),
        statuses=dict(Counter(r["status"] for r in results)),
        kinds=dict(Counter(r["unique_id"].split(".")[0] for r in results)),
    )


# The dbt commands that build models: their steps record the data time they read (decision 0019).
BUILDS = ("build", "run")


class JobRunner:
    """Runs one job's steps in order, stopping at the first failure."""

    def __init__(
        self,
        job: Job,
        conf: Settings,
        log: Callable[[str], None],
        spark: Any = None,
        ingestor: Ingestor | None = None,
    ) -> None:
        self.job = job
        self.conf = conf
        self.log = log
        self._spark = spark
        self._ingestor = ingestor or self._ingest_with_engine
        self.touched: list[str] = []

    def spark(self, look: LookAhead | None = None) -> Any:
        """The Spark session, built only when an ingest step needs it, for its batch's size."""
        if self._spark is None:
            from ingestion.nothing_new import batch_settings
            from ingestion.spark import build_session

            conf = batch_settings(self.conf, look)
            self._spark = build_session(f"lakehouse-job-{self.job.name}", conf)
        return self._spark

    def _ingest_with_engine(self, tables: list[TableConfig]) -> IngestRun:
        """The engine's run; a job that has not started Spark yet first looks without it."""
        from ingestion.engine import ingest
        from ingestion.nothing_new import look_ahead

        look = look_ahead(self.conf, tables) if self._spark is None else None
        if look is not None and (run := look.nothing_new_run(self.conf)) is not None:
            return run
        return ingest(self.spark(look), self.conf, tables, self.log)

    def ingest(self, step: Step, record: StepRecord) -> None:
        from lakehouse.ingest_command import summary_table

        served = served_tables(self.conf).tables
        run = self._ingestor(select_tables(served, list(step.tables) or None))
        console.print(summary_table(run.tables))
        self.touched = run.touched
        record.detail = IngestDetail.of(run)

    def maintain(self, step: Step, record: StepRecord) -> None:
        """Compact merge-on-read bronze, cluster changelogs, before dbt reads them."""
        from ingestion.maintenance import due_tables, maintain

        tables = select_tables(served_tables(self.conf).tables, list(step.tables) or None)
        due = due_tables(self.conf, tables)
        # Never skipped when nothing is due: Airflow would skip the dbt steps after it too.
        done = maintain(self.spark(), self.conf, due, self.log) if due else []
        record.detail = MaintainDetail(
            tuple(m.table for m in done if m.compacted),
            tuple(m.table for m in done if m.clustered),
            len(tables),
        )

    def dbt(self, step: Step, record: StepRecord) -> None:
        args = list(step.args)
        if step.select == "touched":
            selectors = touched_selector(self.touched)
            if not selectors:
                record.status = "skipped"
                record.detail = SkippedDetail("no new data in any dbt source")
                return
            args += ["--select", " ".join(selectors)]
        command = "dbt " + " ".join(args)
        as_of = self._data_as_of() if args[0] in BUILDS else {}
        record.detail = DbtDetail(command, data_as_of=as_of)
        started = time.time()
        result = run_dbt(args, self.conf, target="local")
        results = dbt_results(self.conf.dbt_target_path, command, args, since=started)
        record.detail = replace(results, data_as_of=as_of)
        if result.returncode != 0:
            raise RuntimeError(f"dbt exited with {result.returncode}")

    def _data_as_of(self) -> dict[str, str]:
        """Each served table's newest source time, before a build reads bronze."""
        return data_as_of(self.conf, list(served_tables(self.conf).tables.values()))

    def run_step(self, step: Step) -> StepRecord:
        record = StepRecord(step.name, status="running")
        started = time.monotonic()
        self.log(f"[{self.job.name}] {step.name} ({step.run}) ...")
        try:
            getattr(self, step.run)(step, record)
            if record.status == "running":
                record.status = "success"
        except Exception as error:  # recorded, reported and notified, never swallowed
            record.status = "failed"
            record.error = error_text(error)  # the root cause, as `lakehouse` prints it
        record.seconds = round(time.monotonic() - started, 1)
        self.log(f"[{self.job.name}] {step.name}: {record.status} in {record.seconds}s")
        return record
