"""The continuous service: micro-batches as soon as records arrive, until told to stop.

One process, one Spark session, one `Engine` for all tables, like
HoodieStreamer's continuous mode: poll every source (only through the Source
protocol's `pending`, so landing files and Kafka behave alike); when a poll
finds records, run a micro-batch; keep at least `ingest_min_sync_seconds`
between the starts of two committing micro-batches; when nothing is new,
poll again after `ingest_poll_seconds`, having first compacted the
merge-on-read tables committed to since the last such poll
(ingestion/maintenance.py): the rewrite waits for a quiet moment instead of
lengthening a micro-batch. Under a steady stream, where no poll finds
nothing new, one table whose services are due (`stream_compaction_commits`)
is maintained between two micro-batches. A stop request (SIGTERM, handled by
the command) is seen between tables and between micro-batches, never inside
a table's commits, so a stopped service leaves every table committed.

The health file is rewritten (atomically) after every poll: a scheduler or a
liveness probe reads the state, the pid and how long ago the last poll and
the last micro-batch were. Nothing grows with the number of batches: the
engine keeps one state per table, and each batch's results are handed to
`on_batch` and dropped.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ingestion.config import TableConfig
from ingestion.engine import Engine
from ingestion.errors import UserError
from ingestion.locks import TableLockedError
from ingestion.maintenance import due_tables, maintain, maintain_one
from ingestion.results import IngestRun


def now_text() -> str:
    """UTC now as the health file writes times (ISO, sortable as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Health:
    """What the health file says: state, pid, and when the service last did what."""

    state: str = "starting"  # starting | polling | stopping | stopped | failed
    pid: int = field(default_factory=os.getpid)
    started_at: str = field(default_factory=now_text)
    updated_at: str = ""
    last_poll_at: str | None = None
    caught_up_at: str | None = None  # the last poll that found nothing new
    last_batch_at: str | None = None  # end of the last micro-batch that committed
    last_batch_seconds: float | None = None
    batches: int = 0
    events: int = 0
    quarantined: int = 0
    error: str | None = None

    def write(self, path: Path, state: str | None = None) -> None:
        """Rewrite the health file in one rename, so a reader never sees half of it."""
        self.state = state or self.state
        self.updated_at = now_text()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{self.pid}")
        partial.write_text(json.dumps(asdict(self), indent=2))
        partial.replace(path)

    def count(self, run: IngestRun) -> None:
        self.last_poll_at = now_text()
        if not run.touched:
            self.caught_up_at = self.last_poll_at
        else:
            self.batches += 1
            self.events += run.events
            self.quarantined += run.quarantined
            self.last_batch_at = self.last_poll_at
            self.last_batch_seconds = run.seconds


@dataclass(frozen=True)
class Pacing:
    """When the next poll starts: HoodieStreamer's min sync interval, plus a poll interval."""

    poll_seconds: float
    min_sync_seconds: float

    def wait_after(self, run: IngestRun, started: float, now: float) -> float:
        """Seconds to wait before the next poll."""
        if run.touched:
            return max(0.0, started + self.min_sync_seconds - now)
        return max(0.0, min(self.poll_seconds, started + self.poll_seconds - now))


class TableWatch:
    """The served tables, looked at again: a table added joins the next poll.

    Looked at when the config file changes, and every `every_seconds` when a
    source's patterns may find new tables at the source (ingestion/discovery.py).
    Only additions are followed: a changed entry of a table already served
    (its key, its type) waits for a restart, as a table's storage layout is
    fixed when it is created. A file that does not load (an edit half made) or
    a broker that does not answer is reported and the service keeps its
    tables until the next look.
    """

    def __init__(
        self,
        path: Path,
        load: Callable[[], list[TableConfig]],
        log: Callable[[str], None],
        every_seconds: float | None = None,
    ) -> None:
        self.path, self.load, self.log = path, load, log
        self.every_seconds = every_seconds
        self.stamp = self._stamp()
        self.looked = time.monotonic()

    def _stamp(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return -1

    def _due(self) -> bool:
        stamp = self._stamp()
        waited = time.monotonic() - self.looked
        due = stamp != self.stamp or (
            self.every_seconds is not None and waited >= self.every_seconds
        )
        if due:
            self.stamp, self.looked = stamp, time.monotonic()
        return due

    def added(self, known: set[str]) -> list[TableConfig]:
        """The tables served now that `known` does not hold (nothing when not due)."""
        if not self._due():
            return []
        try:
            tables = self.load()
        except UserError as error:
            self.log(f"tables kept as they are: {error}")
            return []
        return [table for table in tables if table.name not in known]


def maintain_idle(engine: Engine, unmaintained: set[str]) -> set[str]:
    """Maintain the tables among `unmaintained` (ingestion.maintenance); return those left over.

    A table another process writes (its lock not free within
    `lock_wait_seconds`) is left for the next quiet poll, never a failure.
    """
    due = due_tables(engine.conf, [t for t in engine.tables if t.name in unmaintained])
    try:
        maintain(engine.spark, engine.conf, due, engine.log)
    except TableLockedError as error:
        engine.log(f"maintenance left for later: {error}")
        return unmaintained
    return set()


def maintain_streaming(engine: Engine, unmaintained: set[str]) -> None:
    """Between two micro-batches of a steady stream, one table's services that are due.

    No poll finds nothing new under a steady stream, so without this the
    tables' compactions would all run inline, in one micro-batch. The tables
    stay unmaintained: the next quiet poll compacts what is left.
    """
    candidates = [t for t in engine.tables if t.name in unmaintained]
    try:
        maintain_one(engine.spark, engine.conf, candidates, engine.log)
    except TableLockedError as error:
        engine.log(f"maintenance left for later: {error}")


def serve(
    engine: Engine,
    stop: threading.Event,
    on_batch: Callable[[IngestRun], None],
    health_file: Path,
    watch: TableWatch | None = None,
) -> Health:
    """Poll and ingest until `stop` is set; return the final health (state `stopped`).

    An error ends the service with the health file saying `failed` and why:
    a scheduler restarts it, and the checkpoints make the restart exact.
    """
    conf = engine.conf
    pacing = Pacing(conf.ingest_poll_seconds, conf.ingest_min_sync_seconds)
    health = Health()
    health.write(health_file, "polling")
    unmaintained: set[str] = set()  # tables committed to since their maintenance
    try:
        while not stop.is_set():
            started = time.monotonic()
            if watch is not None and (added := watch.added({t.name for t in engine.tables})):
                engine.add_tables(added)
                engine.log(f"serving {len(added)} new table(s): {', '.join(t.name for t in added)}")
            run = engine.run_batch(stop)
            health.count(run)
            if run.touched:
                on_batch(run)
                unmaintained |= set(run.touched)
                if not stop.is_set():
                    maintain_streaming(engine, unmaintained)
            elif unmaintained and not stop.is_set():
                unmaintained = maintain_idle(engine, unmaintained)
            health.write(health_file, "stopping" if stop.is_set() else "polling")
            stop.wait(pacing.wait_after(run, started, time.monotonic()))
    except BaseException as error:
        health.error = f"{type(error).__name__}: {str(error).strip()[:300]}"
        health.write(health_file, "failed")
        raise
    health.write(health_file, "stopped")
    return health
