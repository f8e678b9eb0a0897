"""`lakehouse run --live`: the main job on the real chain instead of generated files.

PostgreSQL and MariaDB get the TICKIT tables and a short workload by SQL;
Debezium publishes the changes to Kafka; the daily job then ingests ems and
ecomm from Kafka (crm, SQL Server, from generated files: not installable
here), builds the dbt project and its docs, as `lakehouse run` does.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from ingestion.errors import UserError
from ingestion.settings import settings
from ingestion.spark import build_session
from lakehouse import stack
from lakehouse.cdc import chain, markers
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.cdc.load import load_unless_loaded
from lakehouse.cdc.workload import WorkloadOptions, run_workload
from lakehouse.main_job import closing_message
from lakehouse.scheduler.run import run_job
from lakehouse.services import dashboard_server, docs_site

LIVE_KINDS = {"ems": "kafka", "ecomm": "kafka"}
WORKLOAD_TRANSACTIONS = 200


def run_live_job(scale: float, log: Callable[[str], None] = print) -> int:
    """The chain up and loaded, a workload, then the daily job reading ems and ecomm from Kafka."""
    started = time.monotonic()
    os.environ["LAKEHOUSE_SOURCE_KINDS"] = json.dumps(LIVE_KINDS)  # for this job and its steps
    settings.cache_clear()
    conf = settings()
    log("1/5 local stack and the live CDC chain")
    stack.up(conf, log=log)
    chain.up(conf, log=log)
    log(f"2/5 TICKIT tables in PostgreSQL and MariaDB at scale {scale}, then a workload")
    load_unless_loaded(scale, conf, log)
    run_workload(WorkloadOptions(transactions=WORKLOAD_TRANSACTIONS), conf, log)
    log("3/5 crm (SQL Server) from generated files")
    generate(GenerateOptions(out=conf.landing, scale=scale, change_batches=0))
    spark = build_session("lakehouse-live")
    seconds = markers.wait_published(spark, conf, markers.write_markers(conf), log=log)
    log(f"  every change is in Kafka ({seconds:.1f}s after the last commit)")
    log("4/5 the daily job: ingest (ems, ecomm from Kafka), freshness, dbt build, docs")
    record = run_job("daily", conf, log, spark=spark)
    if record.status != "success":
        raise UserError(f"the daily job failed; run record {record.record}")
    log("5/5 documentation site and dashboard")
    site = docs_site.serve(conf, log)
    board = dashboard_server.up(conf, log)
    log(closing_message(conf, record, site, board, time.monotonic() - started))
    log("  chain: `.venv/bin/lakehouse cdc status`, stop with `.venv/bin/lakehouse cdc down`")
    return 0
