"""What an ingestion run did, as typed values: the engine's only output.

The summary printed by `lakehouse ingest`, the ingest run record, the
scheduler's step records and `lakehouse run` all read these, never a dict,
so a field renamed here is renamed (or fails to type-check) everywhere.
No Spark in this module: the counts arrive as plain rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingestion.profile import StepTiming

OPS = "rcudt"  # Debezium's ops: read (snapshot), create, update, delete, truncate


@dataclass(frozen=True)
class BatchCounts:
    """Counts over one decoded batch: line flavours, event ops and rejected lines.

    With the lowest and highest source position of its events (ordering.py),
    and its newest event's source commit time.
    """

    flavours: dict[str, int] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)
    rejects: int = 0
    first_position: str | None = None
    last_position: str | None = None
    newest_source_ms: int | None = None  # the newest event's source commit time (epoch ms)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, int]]) -> BatchCounts:
        """From (kind, value, count) rows, kind being `flavour`, `op` or `reject`."""
        flavours: dict[str, int] = {}
        ops: dict[str, int] = {}
        rejects = 0
        for kind, value, count in rows:
            if kind == "flavour":
                flavours[value] = count
            elif kind == "op":
                ops[value] = count
            elif kind == "reject":
                rejects += count
            else:
                raise ValueError(f"unknown count kind '{kind}'")
        return cls(dict(sorted(flavours.items())), dict(sorted(ops.items())), rejects)

    @property
    def events(self) -> int:
        return sum(self.ops.values())

    @property
    def tombstones(self) -> int:
        return self.flavours.get("tombstone", 0)

    @property
    def truncates(self) -> int:
        return self.ops.get("t", 0)

    @property
    def only_inserts(self) -> bool:
        """Nothing but snapshot reads and creates: a new table can be bulk-inserted."""
        return set(self.ops) <= {"r", "c"}


@dataclass(frozen=True)
class BronzeCounts:
    """Rows of one bronze commit: deletes (including truncated keys) and the rest."""

    upserted: int = 0
    deleted: int = 0

    @classmethod
    def from_totals(cls, rows: int, deleted: int) -> BronzeCounts:
        return cls(upserted=rows - deleted, deleted=deleted)


@dataclass
class TableResult:
    """What one table's run did; printed as the summary and kept in the run record."""

    table: str
    files: int = 0
    events: dict[str, int] = field(default_factory=dict)
    tombstones: int = 0
    upserted: int = 0
    deleted: int = 0
    quarantined: int = 0
    seconds: float = 0.0
    committed: bool = False
    profile: tuple[StepTiming, ...] = ()

    @classmethod
    def applied(
        cls,
        table: str,
        files: int,
        batch: BatchCounts,
        bronze: BronzeCounts,
        seconds: float,
        profile: tuple[StepTiming, ...] = (),
    ) -> TableResult:
        """A table whose new files were committed."""
        return cls(
            table=table,
            files=files,
            events=dict(batch.ops),
            tombstones=batch.tombstones,
            upserted=bronze.upserted,
            deleted=bronze.deleted,
            quarantined=batch.rejects,
            seconds=seconds,
            committed=True,
            profile=profile,
        )

    @property
    def total_events(self) -> int:
        return sum(self.events.values())

    @property
    def events_per_second(self) -> float:
        return round(self.total_events / self.seconds, 1) if self.seconds else 0.0

    def to_record(self) -> dict[str, Any]:
        return {**asdict(self), "events_per_second": self.events_per_second}


def ingestion_time() -> str:
    """Now, as a run stamps its rows (`_ingested_at`) and its record (`started_at`)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


@dataclass(frozen=True)
class IngestRun:
    """One `ingest` call over some tables: what the ingest run record holds."""

    started_at: str
    seconds: float
    landing: str
    lake: str
    tables: tuple[TableResult, ...]
    steps: tuple[StepTiming, ...] = ()  # the run's own steps (session start, databases)

    @property
    def events(self) -> int:
        return sum(t.total_events for t in self.tables)

    @property
    def files(self) -> int:
        return sum(t.files for t in self.tables)

    @property
    def quarantined(self) -> int:
        return sum(t.quarantined for t in self.tables)

    @property
    def touched(self) -> list[str]:
        """Tables that got a commit, in run order (what `select: touched` builds)."""
        return [t.table for t in self.tables if t.committed]

    def to_json(self) -> str:
        """The run record: the run's settings and every table's result."""
        record = {
            "started_at": self.started_at,
            "seconds": self.seconds,
            "landing": self.landing,
            "lake": self.lake,
            "tables": [t.to_record() for t in self.tables],
            "steps": [asdict(s) for s in self.steps],
        }
        return json.dumps(record, indent=2)
