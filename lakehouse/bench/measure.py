"""Run one contender in its own process and measure it: wall seconds and peak RSS.

The same function measures ours, HoodieStreamer, the plain-Spark ceiling and
dbt, so JVM start-up and memory are counted alike for all. A worker reports
what it did on one stdout line starting with RESULT_PREFIX (JSON).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestion.errors import UserError
from lakehouse.bench.memory import PeakSampler

RESULT_PREFIX = "BENCH-RESULT "


class ContenderFailed(UserError):
    """A measured process exited non-zero; the message points at its log."""


@dataclass
class Measured:
    """One measured process."""

    seconds: float
    peak_rss_bytes: int
    returncode: int
    log: str
    result: dict[str, Any] = field(default_factory=dict)


def report_result(result: dict[str, Any]) -> None:
    """Called by a worker: hand its result to the measuring process."""
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def _result_from(log: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with log.open(errors="replace") as handle:
        for line in handle:
            if line.startswith(RESULT_PREFIX):
                found = json.loads(line[len(RESULT_PREFIX) :])
    return found


def run_measured(
    command: Sequence[str],
    env: dict[str, str],
    log: Path,
    cwd: Path | None = None,
    also_sample: Sequence[int] = (),
    check: bool = True,
) -> Measured:
    """Run `command` to completion, sampling its process tree (and `also_sample` pids)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        with PeakSampler([process.pid, *also_sample]) as sampler:
            returncode = process.wait()
    seconds = time.monotonic() - started
    measured = Measured(round(seconds, 2), sampler.peak, returncode, str(log), _result_from(log))
    if check and returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise ContenderFailed(f"{command[0]} ... exited {returncode}; log {log}:\n{tail}")
    return measured
