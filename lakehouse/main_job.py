"""The main job, end to end on the local stack: CDC -> bronze -> dbt -> docs.

`lakehouse run` (and `make run`) call this; each step is the same code a user
or a scheduler runs on its own (the `daily` job of conf/jobs.yml), so the demo
proves the real path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from lakehouse import stack
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.cdc.generate.report import ProgressBar, print_summary
from lakehouse.scheduler.records import JobRecord, failed_run
from lakehouse.scheduler.run import run_job
from lakehouse.services import dashboard_server, docs_site


def _check_landing_matches(landing: str, scale: float) -> None:
    """Refuse to mix two generations in one landing zone (the lake already holds the first)."""
    manifest = Path(landing) / "_manifest.json"
    if "://" in landing or not manifest.exists():
        return
    previous = json.loads(manifest.read_text()).get("options", {}).get("scale")
    if previous is not None and float(previous) != scale:
        raise UserError(
            f"{landing} holds CDC generated at scale {previous}, not {scale}: "
            "remove .lakehouse/landing and .lakehouse/lake (and `lakehouse stack down` first) "
            "or run with the same --scale"
        )


def run_main_job(
    scale: float, change_batches: int | None = None, log: Callable[[str], None] = print
) -> int:
    """Generate TICKIT CDC, run the daily job on it, serve the docs site and dashboard.

    A failure, in the daily job or around it (the stack, the generation, the
    docs site), writes `.lakehouse/runs/main-<time>.json` (status failed, the
    error), then is raised.
    """
    started = time.monotonic()
    now = datetime.now(UTC)
    conf = settings()
    try:
        options = GenerateOptions(out=conf.landing, scale=scale)
        if change_batches is not None:
            options = replace(options, change_batches=change_batches)
        return _main_job(conf, options, log, started)
    except (Exception, KeyboardInterrupt) as error:
        path = conf.home / "runs" / f"main-{now:%Y%m%dT%H%M%S%f}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        seconds = time.monotonic() - started
        path.write_text(failed_run(now.isoformat(timespec="seconds"), seconds, error, scale=scale))
        raise


def _main_job(
    conf: Settings, options: GenerateOptions, log: Callable[[str], None], started: float
) -> int:
    log("1/4 local stack")
    stack.up(conf, log=log)

    log(f"2/4 TICKIT CDC at scale {options.scale} -> {conf.landing}")
    _check_landing_matches(conf.landing, options.scale)
    with ProgressBar() as progress:
        summary = generate(options, progress)
    print_summary(summary)

    log("3/4 the daily job: ingest into Hudi bronze, source freshness, dbt build, docs")
    record = run_job("daily", conf, log)
    if record.status != "success":
        raise UserError(f"the daily job failed; run record {record.record}")

    log("4/4 documentation site and dashboard")
    site = docs_site.serve(conf, log)
    board = dashboard_server.up(conf, log)
    log(closing_message(conf, record, site, board, time.monotonic() - started))
    return 0


def closing_message(
    conf: Settings, record: JobRecord, site: str, board: str, seconds: float
) -> str:
    """Where everything is; the event total comes from the ingest steps' typed details."""
    return (
        f"done in {seconds:.0f}s: {record.ingested_events:,} events in bronze, marts built.\n"
        f"  SQL:   jdbc:hive2://{conf.thrift_host}:{conf.thrift_port} "
        f"({conf.bronze_database}.*, {conf.marts_schema}.*), "
        "or `.venv/bin/lakehouse dbt -- show ...`\n"
        f"  docs:  {site}\n"
        f"  dashboard: {board}\n"
        f"  runs:  {record.record}\n"
        f"  stop:  `.venv/bin/lakehouse dashboard down; .venv/bin/lakehouse docs stop; "
        f".venv/bin/lakehouse stack down`"
    )
