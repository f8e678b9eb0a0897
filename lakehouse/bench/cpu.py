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


def cpu_seconds(pid: int) -> float:
    """User and system seconds of `pid`, with those of the children it has waited for."""
    text = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command name (which may hold spaces): utime, stime,
    # cutime and cstime are the 14th to 17th of proc(5), 12th to 15th here.
    fields = text[text.rindex(")") + 2 :].split()
    return sum(int(value) for value in fields[11:15]) / CLOCK_TICKS


def tree_cpu_seconds(roots: Iterable[int]) -> float:
    """CPU seconds of every live process of the trees under `roots` (one gone is skipped)."""
    total = 0.0
    for pid in tree(roots):
        with contextlib.suppress(OSError, ValueError):
            total += cpu_seconds(pid)
    return total


class CoreMeter:
    """The cores a process tree used on average while the `with` block ran."""

    def __init__(self, roots: Iterable[int]) -> None:
        self.roots = list(roots)
        self.cores: float | None = None

    def __enter__(self) -> CoreMeter:
        self._started = time.monotonic()
        self._before = tree_cpu_seconds(self.roots)
        return self

    def __exit__(self, *_: object) -> None:
        used = tree_cpu_seconds(self.roots) - self._before
        self.cores = round(used / max(time.monotonic() - self._started, 1e-9), 2)
