"""The one lock all jobs share: two jobs ingesting the same tables would race on checkpoints."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from ingestion.errors import UserError
from ingestion.settings import Settings


class JobLockedError(UserError):
    """Another job holds the lock; this run did nothing."""


@contextmanager
def job_lock(conf: Settings, job: str) -> Iterator[None]:
    """Hold the jobs lock for this process; refuse at once when another run has it.

    flock, not a pid file: the kernel drops it when the holder dies, so a
    killed run never leaves a stale lock behind.
    """
    conf.run_dir.mkdir(parents=True, exist_ok=True)
    path = conf.run_dir / "jobs.lock"
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise JobLockedError(
                f"another job is running ({handle.read().strip() or 'unknown'}); "
                f"this run of '{job}' did nothing"
            ) from None
        handle.truncate(0)
        handle.write(f"job {job}, pid {os.getpid()}, since {datetime.now(UTC):%H:%M:%S}Z\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)
