"""The main job, end to end on the local stack: CDC -> bronze -> dbt -> docs.

`lakehouse run` (and `make run`) call this; each step is the same code a user
or a scheduler runs on its own, so the demo proves the real path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ingestion import stack
from ingestion.config import load_tables
from ingestion.dbt import run_dbt
from ingestion.generate import GenerateOptions, generate
from ingestion.generate.report import ProgressBar, print_summary
from ingestion.job import ingest
from ingestion.output import UserError, console
from ingestion.runner import summary_table
from ingestion.settings import PROJECT_DIR, settings
from ingestion.spark import build_session


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


def run_main_job(scale: float, log: Callable[[str], None] = print) -> int:
    """Generate TICKIT CDC, ingest it, build and document the dbt project."""
    started = time.monotonic()
    conf = settings()
    log("1/5 local stack")
    stack.up(conf, log=log)

    log(f"2/5 TICKIT CDC at scale {scale} -> {conf.landing}")
    _check_landing_matches(conf.landing, scale)
    with ProgressBar() as progress:
        summary = generate(GenerateOptions(out=conf.landing, scale=scale), progress)
    print_summary(summary)

    log(f"3/5 ingest into Hudi bronze at {conf.lake}")
    spark = build_session("lakehouse-main-job", conf)
    results = ingest(spark, conf, list(load_tables().values()), log)
    spark.stop()
    console.print(summary_table(results))

    log("4/5 dbt build (target local: the Thrift server)")
    if run_dbt(["build"], conf, target="local").returncode != 0:
        raise UserError("dbt build failed; see the output above and logs/dbt.log")
    log("5/5 dbt docs generate")
    if run_dbt(["docs", "generate"], conf, target="local").returncode != 0:
        raise UserError("dbt docs generate failed")

    log(
        f"done in {time.monotonic() - started:.0f}s: "
        f"{sum(sum(r.events.values()) for r in results):,} events in bronze, marts built.\n"
        f"  SQL:   jdbc:hive2://{conf.thrift_host}:{conf.thrift_port} "
        f"(tickit_bronze.*, tickit_marts.*), or `.venv/bin/lakehouse dbt -- show ...`\n"
        f"  docs:  {PROJECT_DIR / 'target' / 'index.html'} "
        f"(serve it: `.venv/bin/lakehouse dbt -- docs serve --port 8080`)\n"
        f"  stop:  `.venv/bin/lakehouse stack down`"
    )
    return 0
