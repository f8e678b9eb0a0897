"""Failed connector tasks are restarted, a few times, then reported with their trace.

Connect never restarts a failed task by itself, and Debezium's MariaDB 3.2 task
can die after a broker restart (connectors.Restarter); the live chain's
test cannot make that race happen on demand. These tests run the project's
REST client against a loopback stand-in for Connect's status and restart
endpoints, whose task fails the way that one does.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest

from ingestion.settings import Settings, settings
from lakehouse.cdc import connectors
from lakehouse.stack import StackError

TRACE = (
    "java.lang.IllegalStateException: DebeziumOpenLineageEmitter not initialized for "
    "connector ConnectorContext[connectorName=mariadb, config={database.password=secret}]"
)
SHOWN = TRACE.replace("{database.password=secret}]", "{...}")  # the config left out
RESTART = "/connectors/tickit-ecomm/restart?includeTasks=true&onlyFailed=true"


class _Connect(http.server.BaseHTTPRequestHandler):
    """Connect's status and restart endpoints; tickit-ecomm's task fails `failures` times."""

    failures = 0
    restarts: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        name = self.path.split("/")[2]
        task = {"id": 0, "state": "RUNNING"}
        if name == "tickit-ecomm" and len(self.restarts) < self.failures:
            task = {"id": 0, "state": "FAILED", "trace": f"{TRACE}\n\tat ..."}
        self._answer(200, {"name": name, "connector": {"state": "RUNNING"}, "tasks": [task]})

    def do_POST(self) -> None:
        self.restarts.append(self.path)
        self._answer(202, {})

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def connect(monkeypatch) -> Iterator[Settings]:
    """The stand-in on a loopback port, as the settings name it; no grace after a restart."""
    _Connect.restarts = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Connect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(connectors, "RESTART_GRACE", 0.0)
    yield dataclasses.replace(settings(), cdc_connect_port=server.server_port)
    server.shutdown()
    server.server_close()


def test_a_failed_task_is_restarted_and_the_wait_ends_when_it_runs(connect: Settings) -> None:
    _Connect.failures = 1
    logged: list[str] = []
    connectors.wait_running(connect, time.monotonic() + 30, logged.append)
    assert _Connect.restarts == [RESTART]
    assert logged == [f"connector tickit-ecomm: task failed ({SHOWN}); restarting it"]


def test_a_task_that_keeps_failing_ends_the_wait_with_its_trace(connect: Settings) -> None:
    _Connect.failures = 99
    with pytest.raises(StackError) as raised:
        connectors.wait_running(connect, time.monotonic() + 30, lambda _: None)
    assert len(_Connect.restarts) == connectors.MAX_RESTARTS
    assert str(raised.value) == (
        f"connector tickit-ecomm failed again after {connectors.MAX_RESTARTS} restarts: "
        f"{SHOWN}; see `lakehouse cdc logs --service connect`"
    )
