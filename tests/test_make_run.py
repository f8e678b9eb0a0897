"""`make run` as the getting-started page writes it: set-up, then the main job end to end.

It runs in the repository on a home, ports and target folder of its own, so on
a stack of its own beside the suite's, and what it started is stopped with the
commands its closing message prints.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from tests.guides import code_blocks, command

REPO = Path(__file__).resolve().parents[1]
PAGE = "getting-started.md"
STEPS = (
    "1/4 local stack",
    "2/4 TICKIT CDC at scale 0.01",
    "3/4 the daily job",
    "4/4 documentation site and dashboard",
)
SERVED = ("docs", "dashboard")
STOP_AFTER_A_FAILURE = (
    ".venv/bin/lakehouse dashboard down; .venv/bin/lakehouse docs stop; "
    ".venv/bin/lakehouse stack down"
)


def page_command(section: str, wanted: str) -> str:
    """The page's own line for `wanted` in `section`: the suite runs what the page says."""
    blocks = [b for b in code_blocks(REPO / "docs" / PAGE, "bash") if b.section == section]
    [line] = [command(line) for b in blocks for line in b.lines if command(line) == wanted]
    return line


def own_environment(home: Path, free_port) -> dict[str, str]:
    """The suite's environment with a home, ports and dbt target of this test's own."""
    ports = ("THRIFT", "METASTORE", "DOCS", "DASHBOARD")
    return {
        **os.environ,
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_LANDING": str(home / "landing"),
        "LAKEHOUSE_LAKE": str(home / "lake"),
        "LAKEHOUSE_DBT_TARGET_PATH": str(home / "target"),
        **{f"LAKEHOUSE_{name}_PORT": str(free_port()) for name in ports},
    }


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


def test_make_run_as_written_then_its_stop_commands(tmp_path: Path, free_port) -> None:
    env = own_environment(tmp_path / "home", free_port)
    done = subprocess.run(
        page_command("Two commands", "make run"),
        shell=True,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    printed = done.stdout
    stop = re.search(r"stop:\s+`([^`]+)`", printed)
    # What it started is stopped even when it failed half way (no closing message then).
    stopping = stop.group(1) if stop else STOP_AFTER_A_FAILURE
    try:
        assert done.returncode == 0, printed[-3000:] + done.stderr[-3000:]
        assert [step for step in STEPS if step in printed] == list(STEPS)
        events = re.search(r"done in \d+s: ([\d,]+) events in bronze, marts built\.", printed)
        assert events and int(events.group(1).replace(",", "")) > 0
        urls = started_urls(printed)
        assert len(urls) == len(SERVED) and all(answers(url) for url in urls)
        record = re.search(r"runs:\s+(\S+\.json)", printed)
        assert record, printed[-2000:]
        steps = json.loads(Path(record.group(1)).read_text())["steps"]
        assert [(s["name"], s["status"]) for s in steps] == [
            (name, "success") for name in ("ingest", "maintain", "freshness", "build", "docs")
        ]
    finally:
        stopped = subprocess.run(
            stopping, shell=True, cwd=REPO, env=env, capture_output=True, text=True, timeout=600
        )
    assert stop and stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not any(answers(url) for url in urls)
    lakehouse = str(REPO / ".venv" / "bin" / "lakehouse")
    status = subprocess.run([lakehouse, "stack", "status"], env=env, capture_output=True)
    assert status.returncode == 1  # nothing of its stack answers
