"""One benchmark at a time in a project: the second is refused while the first runs.

Two benches at once share the project's bench folders and local catalog: the
second empties the first's logs and the first stops the catalog under the
second, so both fail with errors that name neither cause. Their figures
would be void anyway, as they share the machine's cores. The lock is the
writers' `flock` (ingestion/locks.py), so a killed bench leaves none behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from ingestion.errors import UserError
from ingestion.locks import LockBusy, file_lock, locks_folder
from ingestion.settings import settings


class BenchBusyError(UserError):
    """Another benchmark of this project is running; this one did nothing."""


@contextmanager
def one_bench_at_a_time(name: str) -> Iterator[None]:
    """Hold the project's bench lock for `lakehouse bench <name>`, or refuse at once."""
    path = locks_folder(settings().home) / "bench.lock"
    with ExitStack() as held:
        try:
            held.enter_context(file_lock(path, 0, f"lakehouse bench {name}"))
        except LockBusy as busy:
            raise BenchBusyError(
                f"another benchmark is running in this project ({busy.holder}): wait for it to"
                " end or stop it, as two at once share its folders, catalog and cores"
            ) from None
        yield
