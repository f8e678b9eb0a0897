"""A test run stopped by SIGTERM (a CI limit, `timeout`) still tears its session down.

Without tests/conftest.py's handler, Python ends the process at once and the
run's stack (catalog and Thrift server) outlives it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 60

# A run whose session fixture marks its teardown, and whose one test waits to be stopped.
CHILD = """
import threading
from pathlib import Path

import pytest

MARKS = Path(__file__).parent


@pytest.fixture(scope="session")
def server():
    yield
    (MARKS / "torn-down").touch()


def test_waits_to_be_stopped(server):
    (MARKS / "started").touch()
    threading.Event().wait(120)
"""


def test_a_run_stopped_by_sigterm_runs_its_session_teardown(tmp_path: Path) -> None:
    (tmp_path / "test_child.py").write_text(CHILD)
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest"]
    child = subprocess.Popen(
        [*command, "-q", str(tmp_path / "test_child.py")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (tmp_path / "started").exists():
        assert child.poll() is None, f"the run ended before its test started: {child.stdout.read()}"
        assert time.monotonic() < deadline, f"its test did not start within {DEADLINE_SECONDS} s"
        time.sleep(0.1)
    child.send_signal(signal.SIGTERM)
    said, _ = child.communicate(timeout=DEADLINE_SECONDS)
    assert (tmp_path / "torn-down").exists(), said
    assert f"stopped by signal {int(signal.SIGTERM)}" in said
