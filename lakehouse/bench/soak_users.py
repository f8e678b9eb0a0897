"""The soak benchmark's background parts: the memory monitor, a dashboard-like client, the jobs.

Each is a thread started and stopped by the driver (soak.py) and keeps
timestamped records (seconds since the soak's streaming began) that
soak_figures.py turns into windows and trends:

- `Monitor` reads, every second, each long-running process's RSS (its whole
  tree) and its JVMs' heap from their counters (jvm_counters.py), and the
  continuous service's health file for each new batch's seconds.
- `SessionClient` does what a dashboard does: a new session per query. The
  time to a new session's `select 1` is the figure the issue's goal names.
- `Jobs` runs, in turns, the hourly job's `dbt build` through the Thrift
  server and a one-shot ingest of a second bronze database from a second
  process followed by a query of it: the two other users of the catalog
  seen when the server once stopped answering.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestion.settings import Settings
from lakehouse import thrift_client
from lakehouse.bench.jvm_counters import class_histogram, heap
from lakehouse.bench.memory import tree, tree_rss_bytes
from lakehouse.bench.soak_figures import Minute


def java_pids(root: int) -> list[int]:
    """The JVMs in a process's tree (a Python driver's JVM is its child)."""
    pids = []
    for pid in sorted(tree([root])):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "java":
                pids.append(pid)
    return pids


class Background:
    """A thread that calls `step` until stopped; `every` seconds from one start to the next."""

    def __init__(self, name: str, every: float, started: float) -> None:
        self.every = every
        self.started = started  # the soak's clock: records are seconds since it
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def now(self) -> float:
        return round(time.monotonic() - self.started, 2)

    def step(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self.halt.is_set():
            begun = time.monotonic()
            self.step()
            self.halt.wait(max(0.0, begun + self.every - time.monotonic()))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.halt.set()
        self.thread.join()


@dataclass
class _Readings:
    """One minute's raw readings, per process name."""

    rss: dict[str, list[int]] = field(default_factory=dict)
    old: dict[str, list[int]] = field(default_factory=dict)
    used: dict[str, list[int]] = field(default_factory=dict)
    limit: dict[str, int] = field(default_factory=dict)

    def minute(self, index: int) -> Minute:
        return Minute(
            minute=index,
            rss={n: int(sum(v) / len(v)) for n, v in self.rss.items() if v},
            old_after_gc={n: min(v) for n, v in self.old.items() if v},
            heap_after_gc={n: min(v) for n, v in self.used.items() if v},
            heap_max=dict(self.limit),
        )


PROGRESS_MINUTES = 10
HISTOGRAM_MINUTE = 10


def progress_line(minute: int, last: Minute, batches: int) -> str:
    """Where a soak is: its minute, the batches so far, each process's memory that minute."""
    memory = ", ".join(
        f"{name} {last.rss[name] / 2**30:.1f} GiB"
        + (f" (old gen {last.old_after_gc[name] / 2**30:.1f})" if name in last.old_after_gc else "")
        for name in sorted(last.rss)
    )
    return f"soak: {minute} min, {batches} batches; RSS {memory}"


class Monitor(Background):
    """RSS and heap of the long-running processes each second; the service's batches."""

    def __init__(
        self,
        processes: dict[str, int],
        health: Path,
        started: float,
        log: Callable[[str], None] = lambda _: None,
    ) -> None:
        super().__init__("soak-monitor", 1.0, started)
        self.processes = processes
        self.health = health
        self.log = log  # a progress line every PROGRESS_MINUTES
        # The Thrift server's class histograms, "early" (at HISTOGRAM_MINUTE) and "late":
        # what fills its heap when its old generation grows (each a full collection).
        self.histograms: dict[str, list[tuple[str, int, int]]] = {}
        self.minutes: list[Minute] = []
        self.batches: list[tuple[float, float, int]] = []  # (at, seconds, events)
        self._readings = _Readings()
        self._minute = 0
        self._seen_batches: int | None = None
        self._events = 0

    def step(self) -> None:
        index = int((time.monotonic() - self.started) // 60)
        if index != self._minute:
            self.minutes.append(self._readings.minute(self._minute))
            self._readings, self._minute = _Readings(), index
            if index % PROGRESS_MINUTES == 0:
                self.log(progress_line(index, self.minutes[-1], len(self.batches)))
            if index >= HISTOGRAM_MINUTE and "early" not in self.histograms:
                self.histogram("early")
        for name, root in self.processes.items():
            self._readings.rss.setdefault(name, []).append(tree_rss_bytes([root]))
            for jvm in java_pids(root)[:1]:
                if (reading := heap(jvm)) is not None:
                    self._readings.old.setdefault(name, []).append(reading.old_used)
                    self._readings.used.setdefault(name, []).append(reading.used)
                    self._readings.limit[name] = reading.max_bytes
        self._batch()

    def histogram(self, moment: str) -> None:
        """The Thrift server JVM's live classes now, kept as `moment`."""
        jvms = java_pids(self.processes["thrift"]) if "thrift" in self.processes else []
        self.histograms[moment] = class_histogram(jvms[0]) if jvms else []

    def _batch(self) -> None:
        """A new batch in the health file: its seconds and events."""
        try:
            state = json.loads(self.health.read_text())
        except (OSError, ValueError):
            return
        batches, events = state.get("batches", 0), state.get("events", 0)
        if self._seen_batches is not None and batches > self._seen_batches:
            self.batches.append(
                (self.now(), state.get("last_batch_seconds") or 0.0, events - self._events)
            )
        self._seen_batches, self._events = batches, events


class SessionClient(Background):
    """A new session per query, as a dashboard opens them: `select 1`, then a count."""

    def __init__(self, conf: Settings, every: float, query: str, started: float) -> None:
        super().__init__("soak-sessions", every, started)
        self.conf = conf
        self.query = query
        self.sessions: list[tuple[float, float | None]] = []  # (at, select 1 seconds or None)

    def step(self) -> None:
        at, begun = self.now(), time.monotonic()
        try:
            with thrift_client.Connection(self.conf, timeout=self.every * 4) as connection:
                connection.execute("select 1")
                answered = round(time.monotonic() - begun, 3)
                connection.execute(self.query)
        except Exception:  # any failure to answer is the figure: unanswered
            self.sessions.append((at, None))
            return
        self.sessions.append((at, answered))


Job = Callable[[], dict[str, Any]]


class Jobs(Background):
    """The scheduled users, in turns: each call runs the next job to its end and records it."""

    def __init__(self, jobs: list[tuple[str, Job]], every: float, started: float) -> None:
        super().__init__("soak-jobs", every, started)
        self.jobs = jobs
        self.turn = 0
        self.records: list[dict[str, Any]] = []

    def step(self) -> None:
        kind, job = self.jobs[self.turn % len(self.jobs)]
        self.turn += 1
        started, begun = self.now(), time.monotonic()
        outcome = job()
        self.records.append(
            {
                "kind": kind,
                "started": started,
                "seconds": round(time.monotonic() - begun, 1),
                **outcome,
            }
        )
