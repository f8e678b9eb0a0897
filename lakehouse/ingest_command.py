"""`lakehouse ingest`: one run over the selected tables, or the continuous service; summaries.

Exit codes: 0 all applied, 3 applied but some records were quarantined
(see <bronze_database>._quarantine), 2 a user error (config, stack).
A run that fails still leaves its run record: status "failed" and the error.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pyspark.sql import SparkSession
from rich.table import Table

from ingestion.config import TABLES_FILE, TableConfig, load_document, select_tables
from ingestion.continuous import TableWatch, serve
from ingestion.discovery import Unserved, served_tables
from ingestion.engine import Engine, ingest
from ingestion.nothing_new import batch_settings, look_ahead
from ingestion.preflight import check_run
from ingestion.profile import StepTiming, timed
from ingestion.results import IngestRun, TableResult, ingestion_time
from ingestion.settings import PROJECT_DIR, SETTINGS_FILE, Settings, load_settings
from ingestion.spark import build_session, runs_quick_jit
from lakehouse import output
from lakehouse.output import console
from lakehouse.scheduler.records import failed_run

EXIT_QUARANTINED = 3

log = logging.getLogger(__name__)


def summary_table(results: Sequence[TableResult]) -> Table:
    """The per-table closing summary."""
    table = Table(title="ingest summary", title_justify="left")
    for column in ("table", "files", "events r/c/u/d/t", "tombstones", "upserted", "deleted",
                   "quarantined", "seconds", "events/s"):  # fmt: skip
        table.add_column(column, justify="left" if column == "table" else "right")
    for r in results:
        ops = "/".join(str(r.events.get(op, 0)) for op in "rcudt")
        table.add_row(r.table, str(r.files), ops, str(r.tombstones), str(r.upserted),
                      str(r.deleted), str(r.quarantined), f"{r.seconds:.1f}",
                      f"{r.events_per_second:,.0f}")  # fmt: skip
    return table


def profile_table(run: IngestRun) -> Table:
    """Every step of the run, per table: seconds, Spark jobs and Hudi's phases of each write."""
    table = Table(title="ingest profile (seconds)", title_justify="left")
    for column in ("table", "step", "seconds", "spark jobs", "detail"):
        table.add_column(column, justify="right" if column in ("seconds", "spark jobs") else "left")
    rows = [("(run)", step) for step in run.steps]
    rows += [(result.table, step) for result in run.tables for step in result.profile]
    for name, step in rows:
        detail = ", ".join(f"{k.removeprefix('hudi_')} {v:g}" for k, v in step.detail.items())
        table.add_row(name, step.step, f"{step.seconds:.2f}", str(step.spark_jobs), detail)
    return table


def _summary(run: IngestRun, seconds: float, record: Path, profile: bool) -> None:
    console.print(summary_table(run.tables))
    if profile:
        console.print(profile_table(run))
    output.say(
        f"ingested {run.events:,} events from {run.files} files into "
        f"{len(run.touched)} table(s), {run.quarantined} quarantined, "
        f"in {seconds:.1f}s; run record {record}"
    )


def run_record_path(conf: Settings, kind: str) -> Path:
    """`.lakehouse/runs/<kind>-<time>`, its folder made: where a run keeps its record."""
    return runs_file(conf.home, kind)


def runs_file(home: Path, kind: str) -> Path:
    """`<home>/runs/<kind>-<time>`, its folder made (`run_record_path` of settings' home)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    record = home / "runs" / f"{kind}-{stamp}"
    record.parent.mkdir(parents=True, exist_ok=True)
    return record


def write_run_record(conf: Settings, run: IngestRun) -> Path:
    """The run as JSON in `.lakehouse/runs/ingest-<time>.json`; returns its path."""
    record = run_record_path(conf, "ingest").with_suffix(".json")
    record.write_text(json.dumps({"status": "success", **json.loads(run.to_json())}, indent=2))
    return record


def _start_session(conf: Settings, continuous: bool) -> tuple[SparkSession, StepTiming]:
    """The Spark session; a continuous service's JVM ignores SIGTERM (see `run_continuous`).

    A one-shot run's step records whether the JVM runs on the quick JIT alone (`for_batch`).
    """
    started = time.monotonic()
    log_file = conf.run_dir / "lakehouse-ingest.log"
    if not continuous:
        spark = build_session("lakehouse-ingest", conf, log_file)
        jit = {"quick_jit": float(runs_quick_jit(spark))}
        return spark, replace(timed("spark session", started), detail=jit)
    # An ignored signal stays ignored across exec, and the JVM then installs no
    # handler for it: a SIGTERM to the whole process group (systemd, a
    # container stop) reaches only the Python driver, which stops between commits.
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        spark = build_session("lakehouse-ingest-continuous", conf, log_file)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return spark, timed("spark session", started)


def run_once(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    startup: tuple[StepTiming, ...],
    profile: bool,
) -> int:
    """One micro-batch over the tables, its summary, its run record."""
    started = time.monotonic()
    run = ingest(spark, conf, tables, output.say, startup=startup)
    _summary(run, time.monotonic() - started, write_run_record(conf, run), profile)
    return EXIT_QUARANTINED if run.quarantined else 0


def continuous_record_path(conf: Settings) -> Path:
    """`.lakehouse/runs/ingest-continuous-<start>.jsonl`: one line per committing micro-batch."""
    return run_record_path(conf, "ingest-continuous").with_suffix(".jsonl")


def run_continuous(
    spark: SparkSession,
    conf: Settings,
    tables: list[TableConfig],
    profile: bool,
    record: Path | None = None,
    watch: TableWatch | None = None,
) -> int:
    """Micro-batches until SIGTERM or SIGINT; each committing batch appended to one record."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    record = record or continuous_record_path(conf)

    def on_batch(run: IngestRun) -> None:
        with record.open("a") as lines:
            lines.write(json.dumps(json.loads(run.to_json())) + "\n")
        _summary(run, run.seconds, record, profile)

    output.say(
        f"ingesting continuously: polls every {conf.ingest_poll_seconds:g}s, micro-batches at "
        f"least {conf.ingest_min_sync_seconds:g}s apart; health {conf.ingest_health_file}; "
        "stop with SIGTERM or Ctrl-C"
    )
    with Engine(spark, conf, tables, output.say) as engine:
        health = serve(engine, stop, on_batch, conf.ingest_health_file, watch)
    output.say(
        f"stopped after {health.batches} micro-batch(es), {health.events:,} events, "
        f"{health.quarantined} quarantined; run record {record}"
    )
    return EXIT_QUARANTINED if health.quarantined else 0


def run_ingest(
    tables: list[str] | None = None,
    landing: str | None = None,
    lake: str | None = None,
    continuous: bool = False,
    profile: bool = False,
) -> int:
    """Ingest once, or continuously until stopped; print summaries; return the exit code.

    A run that fails (a user error, its settings included, or any other)
    writes its record, then raises: `ingest-<time>.json`, or the last line of
    a continuous service's record.
    """
    started, started_at = time.monotonic(), ingestion_time()
    overrides = {k: v for k, v in {"landing": landing, "lake": lake}.items() if v}
    context: dict[str, Any] = {**overrides, "asked": tables or "all"}
    home, record = None, None
    try:
        conf = load_settings(overrides)
        home, context = conf.home, {"landing": conf.landing, "lake": conf.lake, **context}
        record = continuous_record_path(conf) if continuous else None
        return _run_ingest(conf, tables, profile, record)
    except (Exception, KeyboardInterrupt) as error:
        text = failed_run(started_at, time.monotonic() - started, error, **context, tables=[])
        _write_failed(text, home or _home_without_settings(), record)
        raise


def _home_without_settings() -> Path:
    """Where run records go when the settings do not load: LAKEHOUSE_HOME, else the file's."""
    value = os.environ.get("LAKEHOUSE_HOME")
    if value is None:
        try:
            value = (yaml.safe_load(SETTINGS_FILE.read_text()) or {}).get("home")
        except (OSError, yaml.YAMLError, AttributeError):  # unreadable, or not a mapping
            value = None
    path = Path(str(value or ".lakehouse"))
    return path if path.is_absolute() else PROJECT_DIR / path


def _write_failed(text: str, home: Path, continuous: Path | None) -> None:
    """A failed run's record: a file of its own, or a continuous service's last line."""
    try:
        if continuous is None:
            runs_file(home, "ingest").with_suffix(".json").write_text(text + "\n")
        else:
            with continuous.open("a") as lines:
                lines.write(json.dumps(json.loads(text)) + "\n")
    except OSError as unwritable:  # the run's own error is the one to report
        log.warning("the failed run's record could not be written: %s", unwritable)


def _served(conf: Settings, said: set[Unserved], first: bool = False) -> dict[str, TableConfig]:
    """The listed and found tables; a matched topic that cannot be served, and why.

    Each such topic is said once per process (`said` holds those said already).
    """
    served = served_tables(conf, load_document())
    if served.found and first:
        output.say(f"found by pattern: {len(served.found)} table(s): {', '.join(served.found)}")
    for unserved in served.unserved:
        if unserved not in said:
            output.say(f"topic {unserved.topic} not served: {unserved.reason}")
            said.add(unserved)
    return served.tables


def _run_ingest(
    conf: Settings, tables: list[str] | None, profile: bool, continuous: Path | None
) -> int:
    """`run_ingest` once its settings are read; a continuous service's record is `continuous`."""
    said: set[Unserved] = set()
    selected = select_tables(_served(conf, said, first=True), tables)
    check_run(conf, landing=any(t.source.kind == "landing" for t in selected))
    if continuous is not None:
        spark, _ = _start_session(conf, continuous=True)
        # Serving every table: tables added to the config or found while it runs join it.
        watch = (
            None
            if tables
            else TableWatch(
                TABLES_FILE,
                lambda: list(_served(conf, said).values()),
                output.say,
                conf.ingest_discover_seconds,
            )
        )
        return run_continuous(spark, conf, selected, profile, continuous, watch)
    look = look_ahead(conf, selected)
    if look is not None and (run := look.nothing_new_run(conf)) is not None:
        _summary(run, run.seconds, write_run_record(conf, run), profile)
        return 0
    spark, startup = _start_session(batch_settings(conf, look), continuous=False)
    return run_once(spark, conf, selected, (startup,), profile)
