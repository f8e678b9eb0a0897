"""What `bench ingest` measured, as typed records: phases, contenders, state checks, ratios.

The driver (`ingest_bench`) fills them, the report (`ingest_report`) prints
them, and `to_json()` keeps every figure for comparing runs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from lakehouse.bench.measure import Measured


@dataclass(frozen=True)
class Phase:
    """One phase (the snapshot is batch 0, then each change batch) of one contender."""

    batch: int
    events: int
    seconds: float  # process wall time, JVM start included
    work_seconds: float  # what the worker timed after its session was up
    peak_rss_bytes: int
    processes: int
    files_written: int
    bytes_written: int

    @classmethod
    def of(cls, batch: int, events: int, runs: list[Measured], written: tuple[int, int]) -> Phase:
        return cls(
            batch=batch,
            events=events,
            seconds=round(sum(r.seconds for r in runs), 2),
            work_seconds=round(sum(r.result.get("work_seconds", 0.0) for r in runs), 2),
            peak_rss_bytes=max(r.peak_rss_bytes for r in runs),
            processes=len(runs),
            files_written=written[0],
            bytes_written=written[1],
        )


@dataclass(frozen=True)
class PhaseFigures:
    """The snapshot's, or all change batches', totals; latency is per change batch."""

    events: int
    seconds: float
    events_per_second: float | None
    latency_mean_seconds: float | None
    latency_max_seconds: float | None

    @classmethod
    def of(cls, phases: list[Phase]) -> PhaseFigures:
        events = sum(p.events for p in phases)
        seconds = sum(p.seconds for p in phases)
        return cls(
            events=events,
            seconds=round(seconds, 2),
            events_per_second=round(events / seconds, 1) if seconds else None,
            latency_mean_seconds=round(seconds / len(phases), 2) if phases else None,
            latency_max_seconds=max((p.seconds for p in phases), default=None),
        )


@dataclass(frozen=True)
class TableState:
    """One table of one contender after the last phase."""

    rows: int  # rows of the expected state
    differing_keys: int
    read_seconds: float
    # A merge-on-read table of ours: Hudi's cheaper reads of the same files (verify.FLOOR_READS).
    floor_read_seconds: dict[str, float] | None = None


@dataclass(frozen=True)
class StateCheck:
    """A contender's final state against the generator's expected state, and its reads."""

    tables: dict[str, TableState]
    ceiling_rows: int | None = None

    @property
    def matches(self) -> bool:
        return all(t.differing_keys == 0 for t in self.tables.values())

    @property
    def read_seconds(self) -> float:
        return round(sum(t.read_seconds for t in self.tables.values()), 2)

    def floor_reads(self) -> dict[str, float]:
        """The merge-on-read tables' reads summed: the snapshot's, then Hudi's cheaper ones'."""
        floors = [t for t in self.tables.values() if t.floor_read_seconds]
        sums = {"snapshot": sum(t.read_seconds for t in floors)}
        for t in floors:
            for name, seconds in (t.floor_read_seconds or {}).items():
                sums[name] = sums.get(name, 0.0) + seconds
        return {name: round(seconds, 2) for name, seconds in sums.items()} if floors else {}

    def difference(self) -> str:
        """The tables that differ, e.g. 'users: 3 of 4,912 keys differ'."""
        return "; ".join(
            f"{name}: {t.differing_keys:,} of {t.rows:,} keys differ"
            for name, t in self.tables.items()
            if t.differing_keys
        )

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> StateCheck:
        tables = {name: TableState(**figures) for name, figures in result["tables"].items()}
        return cls(tables, result.get("ceiling_rows"))


@dataclass
class Contender:
    """One contender's phases and final state; void when its state is wrong."""

    name: str
    label: str
    status: str = "ran"  # ran | void | unavailable
    reason: str = ""
    phases: list[Phase] = field(default_factory=list)
    state: StateCheck | None = None
    # Ours' table services after the last batch (`lakehouse maintain`), and the reads before it.
    maintenance: Phase | None = None
    state_before_maintenance: StateCheck | None = None

    @property
    def ran(self) -> bool:
        return self.status == "ran"

    @property
    def snapshot(self) -> PhaseFigures:
        return PhaseFigures.of([p for p in self.phases if p.batch == 0])

    @property
    def changes(self) -> PhaseFigures:
        return PhaseFigures.of([p for p in self.phases if p.batch > 0])

    @property
    def changes_maintained_events_per_second(self) -> float | None:
        """Change events/s with the maintenance's seconds added to the batches' (amortized)."""
        changes = self.changes
        extra = self.maintenance.seconds if self.maintenance else 0.0
        total = changes.seconds + extra
        return round(changes.events / total, 1) if total else None

    @property
    def peak_rss_bytes(self) -> int:
        phases = [*self.phases, *([self.maintenance] if self.maintenance else [])]
        return max((p.peak_rss_bytes for p in phases), default=0)

    @property
    def files_written(self) -> int:
        return sum(p.files_written for p in self.phases)

    @property
    def bytes_written(self) -> int:
        return sum(p.bytes_written for p in self.phases)

    def checked(self, state: StateCheck) -> None:
        """Record the state check; a contender whose state differs is void, with the difference."""
        self.state = state
        if not state.matches and self.status == "ran":
            self.status, self.reason = "void", f"final state differs: {state.difference()}"

    def summary(self) -> dict[str, Any]:
        figures = dataclasses.asdict(self)
        figures.update(
            snapshot=dataclasses.asdict(self.snapshot),
            changes=dataclasses.asdict(self.changes),
            wall_seconds=round(sum(p.seconds for p in self.phases), 2),
            peak_rss_bytes=self.peak_rss_bytes,
            files_written=self.files_written,
            bytes_written=self.bytes_written,
            read_seconds=self.state.read_seconds if self.state else None,
            changes_maintained_events_per_second=self.changes_maintained_events_per_second,
        )
        return figures


@dataclass(frozen=True)
class Ratio:
    """Ours over one peer: above 1 means ours is faster (or, for memory, uses more)."""

    snapshot: float | None
    changes: float | None
    read: float | None  # the peer's read seconds over ours
    peak_rss: float | None  # ours' peak over the peer's
    void: str = ""
    changes_maintained: float | None = None  # ours with its maintenance amortized, if it ran


@dataclass
class IngestBenchResults:
    """Everything one `bench ingest` run measured."""

    scale: float
    change_batches: int
    format: str
    events: dict[str, int]
    machine: dict[str, Any]
    spark: dict[str, Any]
    contenders: list[Contender]
    ratios: dict[str, Ratio]
    goals: dict[str, bool | None]
    valid: bool
    jobs: int = 1  # contenders run at once; above 1 the figures are not comparable
    seconds: float = 0.0
    load_average_before: float = 0.0
    load_average_after: float = 0.0
    results_file: str = ""

    def contender(self, name: str) -> Contender:
        return next(c for c in self.contenders if c.name == name)

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["benchmark"] = "ingest"
        data["contenders"] = {c.name: c.summary() for c in self.contenders}
        return json.dumps(data, indent=2, default=str) + "\n"
