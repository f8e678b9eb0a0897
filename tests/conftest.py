"""Shared fixtures: one isolated settings home, one Spark session, one stack per run.

The test run never touches the developer's stack: it gets its own home folder
and free ports, set in the environment before any project module reads them.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_HOME = Path(tempfile.mkdtemp(prefix="lakehouse-test-"))
os.environ.update(
    {
        "LAKEHOUSE_HOME": str(_HOME),
        "LAKEHOUSE_JARS": str(REPO / ".lakehouse" / "jars"),
        "LAKEHOUSE_LANDING": str(_HOME / "landing"),
        "LAKEHOUSE_LAKE": str(_HOME / "lake"),
        "LAKEHOUSE_THRIFT_PORT": str(free_port()),
        "LAKEHOUSE_METASTORE_PORT": str(free_port()),
        "LAKEHOUSE_DRIVER_MEMORY": "3g",
        "LAKEHOUSE_THRIFT_DRIVER_MEMORY": "3g",
    }
)


@pytest.fixture(name="free_port")
def free_port_fixture():
    """A function that returns a free loopback port."""
    return free_port


@pytest.fixture(scope="session")
def home() -> Path:
    return _HOME


@pytest.fixture(scope="session")
def local_stack() -> Iterator[None]:
    """The local stack (catalog + Thrift server), started once and stopped at the end."""
    from ingestion import stack
    from ingestion.settings import settings

    stack.up(log=lambda _: None)
    yield
    stack.down(log=lambda _: None)
    for service in stack.services(settings()):
        assert stack.running_pid(service, settings()) is None


@pytest.fixture(scope="session")
def spark(local_stack: None):
    """The one Spark session of the test run, on the test stack's catalog."""
    from ingestion.spark import build_session

    session = build_session("lakehouse-tests")
    yield session
    session.stop()
