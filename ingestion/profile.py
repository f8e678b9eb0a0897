"""Where a table's run spends its seconds: each step timed, with the Spark jobs it ran.

Every step of a table's run (checkpoint read, listing, decode, counts, each
Hudi write, the catalog) runs inside `Profiler.step`. Spark jobs are tagged
with a job group per step, so the run record says how many Spark actions a
step took as well as how long; a step that runs two jobs over the same input
shows up here. Hudi writes add their own phases (hudi_timeline.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count
from typing import Any

_GROUPS = count()


@dataclass(frozen=True)
class StepTiming:
    """One step of a run: wall seconds, Spark jobs started, and step-specific figures."""

    step: str
    seconds: float
    spark_jobs: int = 0
    detail: dict[str, float] = field(default_factory=dict)


class Profiler:
    """Times the steps of one table's run (one thread), tagging its Spark jobs."""

    def __init__(self, spark: Any, label: str) -> None:
        self.spark = spark
        self.label = label
        self._open: list[tuple[str, float, str, dict[str, float]]] = []

    @contextmanager
    def step(self, name: str) -> Iterator[dict[str, float]]:
        """Time `name`; the yielded dict takes figures the step measured itself."""
        group = f"lakehouse-{self.label}-{next(_GROUPS)}"
        context = self.spark.sparkContext
        context.setJobGroup(group, f"{self.label}: {name}")
        detail: dict[str, float] = {}
        started = time.monotonic()
        try:
            yield detail
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
            self._open.append((name, time.monotonic() - started, group, detail))

    def steps(self) -> tuple[StepTiming, ...]:
        """The timed steps with their job counts (the listener bus drained first)."""
        if not self._open:
            return ()
        context = self.spark.sparkContext
        # Job starts reach the status tracker through Spark's listener bus, asynchronously.
        context._jsc.sc().listenerBus().waitUntilEmpty()
        tracker = context.statusTracker()
        return tuple(
            StepTiming(
                name,
                round(seconds, 3),
                len(tracker.getJobIdsForGroup(group)),
                {k: round(v, 3) for k, v in detail.items()},
            )
            for name, seconds, group, detail in self._open
        )


def timed(name: str, started: float) -> StepTiming:
    """A step timed without a profiler (the Spark session's start, say)."""
    return StepTiming(name, round(time.monotonic() - started, 3))
