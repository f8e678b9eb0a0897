"""One writer per table: a lock file per Hudi table, held for a table's whole run.

Two runs of the same table at once (cron and an Airflow task, a continuous
run and a manual one) would read the same checkpoint and race on Hudi's
timeline, where one writer rolls back the other's inflight commit. The lock
covers a table's run from reading its checkpoint to its last commit; a second
run waits for it (up to `lock_wait_seconds`) and then finds only what is
still new, or gives up with a message naming the holder.

The lock is `flock` on a file under the settings' home: the kernel drops it
when the holder dies, so a killed run never leaves a stale lock, and threads
of one process exclude each other as processes do. It serves the writers of
one host; writers on several hosts use Hudi's optimistic concurrency control
with a shared lock provider instead (docs/operations.md, "One writer per table").
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from ingestion.errors import UserError

POLL_SECONDS = 0.2


class LockBusy(Exception):
    """The lock is held by someone else past the wait; `holder` is what they wrote in it."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class TableLockedError(UserError):
    """Another run holds the table past the wait; this run changed nothing in it."""


def locks_folder(home: Path) -> Path:
    """A settings home's lock files: one per table, one for its benchmarks."""
    return home / "run" / "locks"


def lock_path(home: Path, database: str, table: str) -> Path:
    return locks_folder(home) / f"{database}.{table}.lock"


def _acquire(handle: TextIO, wait_seconds: float) -> None:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.seek(0)
                raise LockBusy(handle.read().strip() or "another run") from None
            time.sleep(POLL_SECONDS)


@contextmanager
def file_lock(path: Path, wait_seconds: float, owner: str) -> Iterator[None]:
    """Hold an exclusive flock on `path`, writing `owner` in it for whoever waits.

    Waits up to `wait_seconds` (0: not at all) for a holder, then raises
    LockBusy naming it. The kernel drops the lock when its holder dies.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        _acquire(handle, wait_seconds)
        handle.seek(0)
        handle.truncate(0)
        handle.write(f"{owner}, pid {os.getpid()}, since {datetime.now(UTC):%Y-%m-%d %H:%M:%S}Z\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def table_lock(home: Path, database: str, table: str, wait_seconds: float) -> Iterator[None]:
    """Hold the table's writer lock; wait for a holder up to `wait_seconds`, then refuse."""
    try:
        with file_lock(lock_path(home, database, table), wait_seconds, "a run"):
            yield
    except LockBusy as busy:
        raise TableLockedError(
            f"{database}.{table} is being written by {busy.holder}; waited "
            f"{wait_seconds:.0f}s: run again when it is done (or raise LAKEHOUSE_LOCK_WAIT_SECONDS)"
        ) from None
