"""The cores a process tree used, read from /proc: a reaped child's seconds count too."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from lakehouse.bench.cpu import CoreMeter, tree_cpu_seconds

# A child that spends 0.6 CPU seconds, then its parent (the measured root) reaps
# it and waits for a line on stdin: what the child used is in the parent's cutime.
BUSY = "import time\nstarted = time.process_time()\nwhile time.process_time() - started < 0.6: pass"
PARENT = (
    "import subprocess, sys\n"
    f"subprocess.run([sys.executable, '-c', {BUSY!r}], check=True)\n"
    "print('done', flush=True)\n"
    "sys.stdin.readline()\n"
)


def test_the_meter_counts_a_reaped_childs_cpu_seconds_as_cores() -> None:
    root = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        before = tree_cpu_seconds([root.pid])
        started = time.monotonic()
        with CoreMeter([root.pid]) as meter:
            assert root.stdout is not None and root.stdout.readline() == "done\n"
            used = tree_cpu_seconds([root.pid]) - before
        elapsed = time.monotonic() - started
    finally:
        root.communicate("\n", timeout=30)
    assert 0.6 <= used < 0.6 + 1.0  # the child's loop, plus two interpreters' start
    assert meter.cores is not None and used / elapsed * 0.9 <= meter.cores <= os.cpu_count()


def test_the_meter_keeps_how_old_and_how_used_the_tree_was_when_it_began() -> None:
    # A process that spends 0.6 CPU seconds, then waits: what it had used is `before`.
    waits = f"{BUSY}\nprint('done', flush=True)\nimport sys; sys.stdin.readline()"
    root = subprocess.Popen(
        [sys.executable, "-c", waits], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    started = time.monotonic()
    try:
        assert root.stdout is not None and root.stdout.readline() == "done\n"
        with CoreMeter([root.pid]) as meter:
            age = time.monotonic() - started
    finally:
        root.communicate("\n", timeout=30)
    assert 0.6 <= meter.before < 0.6 + 1.0
    # /proc's start time counts in clock ticks: a tick or two either side of our own clock.
    assert meter.age is not None and age - 0.1 <= meter.age <= time.monotonic() - started + 0.1
    warmth = {"uptime_seconds": round(meter.age), "cpu_seconds": round(meter.before, 1)}
    assert meter.warmth() == warmth
