"""The live CDC chain shared by the chain's test modules: what was done to it, and how to ingest.

One chain per test run (the session fixture `live_chain` of tests/cdc/conftest.py):
`cdc up` on free ports, `cdc load` at a tiny scale, a workload of inserts,
updates, deletes, an added column and a truncate in both databases, then one
ingestion from Kafka. The modules that use it are one group of
tests/conftest.py's SHARED_GROUPS, so one xdist worker builds it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ingestion.config import TableConfig, load_tables
from ingestion.engine import ingest
from ingestion.results import IngestRun
from ingestion.settings import settings
from lakehouse.cdc import markers
from lakehouse.cdc.load import live_tables
from lakehouse.cdc.workload import WorkloadSummary

DATABASE = "it_live_bronze"
SCALE = 0.002
SEED = 42  # `cdc load`'s snapshot and crm's generated files share it: the same users


@dataclasses.dataclass
class Live:
    """The chain of this test run and what has been done to it."""

    tables: list[TableConfig]
    workloads: list[WorkloadSummary]
    runs: list[IngestRun]


def kafka_tables() -> list[TableConfig]:
    """ems and ecomm tables read from Kafka, into a database of their own."""
    tables = load_tables(database=DATABASE)
    live = {t.name for t in live_tables()}
    return [
        dataclasses.replace(t, source=dataclasses.replace(t.source, kind="kafka"))
        for t in tables.values()
        if t.name in live
    ]


def publish_and_ingest(spark, live: Live) -> IngestRun:
    """Wait until Debezium has published everything, then ingest once from Kafka."""
    markers.wait_published(spark, settings(), markers.write_markers(settings()))
    run = ingest(spark, settings(), live.tables, log=lambda _: None)
    live.runs.append(run)
    return run


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for this process to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
