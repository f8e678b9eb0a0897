"""The one lock all jobs share: two jobs ingesting the same tables would race on checkpoints."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ingestion.errors import UserError
from ingestion.locks import LockBusy, file_lock
from ingestion.settings import Settings


class JobLockedError(UserError):
    """Another job holds the lock; this run did nothing."""


@contextmanager
def job_lock(conf: Settings, job: str) -> Iterator[None]:
    """Hold the jobs lock for this process; refuse at once when another run has it."""
    try:
        with file_lock(conf.run_dir / "jobs.lock", 0, f"job {job}"):
            yield
    except LockBusy as busy:
        raise JobLockedError(
            f"another job is running ({busy.holder}); this run of '{job}' did nothing"
        ) from None
