"""The live chain, once per test run, for every module of the `live_chain` group."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingestion.settings import settings
from lakehouse import stack
from lakehouse.cdc import chain
from lakehouse.cdc.load import load
from lakehouse.cdc.workload import WorkloadOptions, run_workload
from tests.cdc.live import SCALE, SEED, Live, alive, kafka_tables, publish_and_ingest


@pytest.fixture(scope="session")
def live_chain(spark) -> Iterator[Live]:
    conf = settings()
    chain.up(conf, log=lambda _: None)
    try:
        load(SCALE, seed=SEED, conf=conf, log=lambda _: None)
        workload = run_workload(WorkloadOptions(transactions=80, seed=3), conf, lambda _: None)
        live = Live(kafka_tables(), [workload], [])
        publish_and_ingest(spark, live)
        yield live
    finally:
        pids = [stack.running_pid(s, conf) for s in chain.services(conf)]
        chain.down(conf, log=lambda _: None)
        still = [p for p in pids if p is not None and alive(p)]
        assert not still, f"cdc down left processes running: {still}"
