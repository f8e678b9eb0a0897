"""Shared plumbing of the benchmark drivers: environment, work folders, the catalog.

Kept apart from the drivers so `ingest_bench` and `dbt_bench` read as the
steps they measure.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ingestion.settings import Settings
from lakehouse import stack


def process_env() -> dict[str, str]:
    """Environment of every measured process: ours, the peer and the ceiling alike."""
    return {
        **os.environ,
        "SPARK_HOME": str(stack.spark_home()),
        "PYSPARK_PYTHON": sys.executable,
    }


def python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def fresh(path: Path) -> Path:
    """An empty folder (what a previous run left is removed)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


@contextmanager
def catalog_running(conf: Settings, log: Callable[[str], None]) -> Iterator[None]:
    """The shared catalog, which our ingestion registers tables in; stopped after if we started it.

    Only the catalog: the Thrift server is not needed to ingest, and its
    memory would only crowd the measured processes.
    """
    catalogs = [s for s in stack.services(conf) if s.name == "catalog"]
    started = [s for s in catalogs if stack.running_pid(s, conf) is None]
    for service in catalogs:
        pid = stack.start(service, conf, log)
        stack.wait_healthy(service, conf, pid, _deadline(conf), log)
    try:
        yield
    finally:
        for service in started:
            if stack.stop(service, conf):
                log(f"{service.name}: stopped")


@contextmanager
def thrift_running(conf: Settings, log: Callable[[str], None]) -> Iterator[int]:
    """The whole stack (dbt needs the Thrift server); yields the server's pid."""
    before = {s.name: stack.running_pid(s, conf) for s in stack.services(conf)}
    stack.up(conf, log)
    try:
        yield stack.thrift_pid(conf) or 0
    finally:
        for service in reversed(stack.services(conf)):
            if before[service.name] is None and stack.stop(service, conf):
                log(f"{service.name}: stopped")


def _deadline(conf: Settings) -> float:
    return time.monotonic() + conf.start_timeout
