"""Cores a process tree used over a span, read from /proc: what each side of a bench took.

A benchmark's readers share the machine with what they measure: the latency
benches' prober asks the Thrift server about its pending samples in a loop,
and on two cores those queries can take a good part of the machine from the
service being measured (decision 0026). Each side's cores, printed beside
the figures, say what the service had to itself.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from pathlib import Path

from lakehouse.bench.memory import tree

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    """`pid`'s /proc stat fields after the command name (which may hold spaces): the
    3rd field of proc(5) is the first here."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float:
    """User and system seconds of `pid`, with those of the children it has waited for."""
    # utime, stime, cutime and cstime: the 14th to 17th fields of proc(5).
    return sum(int(value) for value in _stat_fields(pid)[11:15]) / CLOCK_TICKS


def uptime_seconds(pid: int) -> float:
    """Seconds since `pid` started (proc(5)'s 22nd field: its start in clock ticks after boot)."""
    started = int(_stat_fields(pid)[19]) / CLOCK_TICKS
    return float(Path("/proc/uptime").read_text().split()[0]) - started


def tree_cpu_seconds(roots: Iterable[int]) -> float:
    """CPU seconds of every live process of the trees under `roots` (one gone is skipped)."""
    total = 0.0
    for pid in tree(roots):
        with contextlib.suppress(OSError, ValueError):
            total += cpu_seconds(pid)
    return total


class CoreMeter:
    """The cores a process tree used on average while the `with` block ran.

    `before` keeps the CPU seconds the tree had used when the block began and
    `age` how long its first root had been running then: a long-running
    server that has already answered for minutes has compiled its hot paths,
    one started for the run has not (decision 0026).
    """

    def __init__(self, roots: Iterable[int]) -> None:
        self.roots = list(roots)
        self.cores: float | None = None
        self.before = 0.0
        self.age: float | None = None

    def __enter__(self) -> CoreMeter:
        self._started = time.monotonic()
        self.before = tree_cpu_seconds(self.roots)
        with contextlib.suppress(OSError, ValueError, IndexError):
            self.age = uptime_seconds(self.roots[0])
        return self

    def warmth(self) -> dict[str, float | None]:
        """The tree's age and CPU seconds when the block began, for a results file."""
        age = None if self.age is None else round(self.age)
        return {"uptime_seconds": age, "cpu_seconds": round(self.before, 1)}

    def __exit__(self, *_: object) -> None:
        used = tree_cpu_seconds(self.roots) - self.before
        self.cores = round(used / max(time.monotonic() - self._started, 1e-9), 2)
