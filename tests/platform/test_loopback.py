"""Every server the project starts listens on loopback only (reliability and security).

With the stack, the docs site, the dashboard and a `lakehouse ingest` process
up together, the listening sockets of each of their process trees (and of
this test process, whose Spark driver the suite shares) are sampled while the
ingestion writes Hudi commits, and every one must be on 127.0.0.1 or ::1.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from ingestion.settings import Settings, settings
from lakehouse import stack
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.services import dashboard_server, docs_site
from tests.platform.sockets import Listener, listeners

DEADLINE_SECONDS = 600


def _server_pids(conf: Settings) -> list[int]:
    services = [*stack.services(conf), docs_site.service(conf), dashboard_server.service(conf)]
    pids = [stack.running_pid(service, conf) for service in services]
    assert all(pids), f"not every server is up: {dict(zip(services, pids, strict=True))}"
    return [pid for pid in pids if pid]


def _sample_while_running(
    process: subprocess.Popen, roots: list[int]
) -> tuple[set[Listener], set[Listener]]:
    """Listening sockets of the roots, and of the ingestion's process tree, until it exits."""
    servers: set[Listener] = set()
    ingestion: set[Listener] = set()
    deadline = time.monotonic() + DEADLINE_SECONDS
    while process.poll() is None:
        assert time.monotonic() < deadline, "the ingestion did not finish in time"
        servers |= listeners(roots)
        ingestion |= listeners([process.pid])
        time.sleep(0.2)
    return servers, ingestion


def test_every_listening_socket_is_on_loopback(daily_job, tmp_path: Path, free_port) -> None:
    # A docs port of its own: the one test_docs_site served may stay held for up to a
    # minute by the browser's closing connection (stack.port_released would wait).
    conf = dataclasses.replace(settings(), docs_port=free_port())
    docs_site.serve(conf, log=lambda _: None)
    dashboard_server.up(conf, log=lambda _: None)
    try:
        generate(GenerateOptions(out=str(tmp_path / "landing"), scale=0.01, change_batches=0))
        env = {
            **os.environ,
            "LAKEHOUSE_LANDING": str(tmp_path / "landing"),
            "LAKEHOUSE_LAKE": str(tmp_path / "lake"),
            "LAKEHOUSE_BRONZE_DATABASE": "loopback_bronze",
        }
        command = [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", "sales,users"]
        ingest = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        servers, ingestion = _sample_while_running(ingest, [os.getpid(), *_server_pids(conf)])
        assert ingest.returncode == 0
    finally:
        dashboard_server.down(conf, log=lambda _: None)
        docs_site.stop(conf, log=lambda _: None)
    server_ports = {conf.thrift_port, conf.metastore_port, conf.docs_port, conf.dashboard_port}
    assert server_ports <= {listener.port for listener in servers}
    # The ingestion's Spark driver listens too (RPC, block manager, UI): all sampled.
    assert len({listener.port for listener in ingestion}) >= 3
    exposed = sorted(
        (found.port, found.address, found.command)
        for found in servers | ingestion
        if not found.loopback
    )
    assert exposed == []
