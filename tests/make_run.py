"""`make run` as the getting-started page writes it: the daily job the suite's later tests read.

It runs once per test run (the `make_run` fixture, tests/conftest.py) on the
worker's own home, stack and bronze database, so its marts, docs and run record
are what the `daily_job` group checks: one end-to-end build serves both the
page's promise and those tests. Its docs site and dashboard get ports of their
own and are stopped at once with the stop line it prints (the group's tests
serve their own); the line's `stack down` runs at the end of the session, as
the stack serves the rest of the run.
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from lakehouse.scheduler.records import JobRecord, read_record
from tests.guides import code_blocks, command

REPO = Path(__file__).resolve().parents[1]
PAGE = "getting-started.md"
# One change batch, so the group's tests have the next ones to ingest incrementally.
ARGS = 'ARGS="--change-batches 1"'
SERVED = ("docs", "dashboard")
STOP_SERVERS_AFTER_A_FAILURE = ".venv/bin/lakehouse dashboard down; .venv/bin/lakehouse docs stop"
STACK_DOWN = ".venv/bin/lakehouse stack down"


@dataclass(frozen=True)
class MakeRun:
    """What `make run` printed, its servers before and after its stop line, its run record."""

    printed: str
    answered: tuple[bool, ...]  # each served address, while up
    servers_stopped: subprocess.CompletedProcess[str]  # the stop line but its `stack down`
    answered_after: tuple[bool, ...]
    record: JobRecord
    env: dict[str, str]


def page_command(section: str, wanted: str) -> str:
    """The page's own line for `wanted` in `section`: the suite runs what the page says."""
    blocks = [b for b in code_blocks(REPO / "docs" / PAGE, "bash") if b.section == section]
    [line] = [command(line) for b in blocks for line in b.lines if command(line) == wanted]
    return line


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def started_urls(printed: str) -> list[str]:
    """The docs site's and the dashboard's addresses from the closing message."""
    found = [re.search(rf"{name}:\s+(http://127\.0\.0\.1:\d+\S*)", printed) for name in SERVED]
    return [m.group(1) for m in found if m]


def shell(line: str, env: dict[str, str], timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        line, shell=True, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def run_make_run(ports: dict[str, int]) -> MakeRun:
    """Run the page's `make run` (one change batch) on the docs and dashboard ports given.

    A failed run stops what it served and raises with the end of its output.
    """
    env = {**os.environ, **{f"LAKEHOUSE_{name}_PORT": str(port) for name, port in ports.items()}}
    make_run = page_command("Two commands", "make run")
    done = shell(f"{make_run} {ARGS}", env, timeout=2400)
    stop = re.search(r"stop:\s+`([^`]+)`", done.stdout)
    record = re.search(r"runs:\s+(\S+\.json)", done.stdout)
    if done.returncode != 0 or not stop or not record:
        shell(STOP_SERVERS_AFTER_A_FAILURE, env, timeout=600)
        raise AssertionError(done.stdout[-3000:] + done.stderr[-3000:])
    servers, _, last = stop.group(1).rpartition("; ")
    assert last == STACK_DOWN, stop.group(1)
    urls = started_urls(done.stdout)
    answered = tuple(answers(url) for url in urls)
    stopped = shell(servers, env, timeout=600)
    return MakeRun(
        printed=done.stdout,
        answered=answered,
        servers_stopped=stopped,
        answered_after=tuple(answers(url) for url in urls),
        record=read_record(Path(record.group(1))),
        env=env,
    )


def stack_down(run: MakeRun) -> None:
    """The stop line's last command, then nothing of the stack answers (`stack status` exits 1)."""
    stopped = shell(STACK_DOWN, run.env, timeout=600)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    lakehouse = str(REPO / ".venv" / "bin" / "lakehouse")
    status = subprocess.run([lakehouse, "stack", "status"], env=run.env, capture_output=True)
    assert status.returncode == 1, status.stdout
