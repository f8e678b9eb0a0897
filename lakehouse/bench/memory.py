"""Peak resident memory of a process tree, by sampling /proc.

A Spark job is a Python driver plus a JVM child (and Python workers), so the
RSS of one pid says little; the peak of the sum over the tree is what the
machine must hold. `resource.getrusage` reports only the largest single child.

A JVM starts its subprocesses with posix_spawn (vfork): until the child execs,
it shares its parent's address space and /proc reports the parent's whole RSS
for it too. Such a child is counted once, with its parent (decision 0025).
"""

from __future__ import annotations

import ctypes
import os
import platform
import threading
from collections.abc import Iterable
from pathlib import Path

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _parents() -> dict[int, int]:
    """pid -> parent pid for every process visible in /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses; fields follow the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
    return parents


def _tree(roots: Iterable[int], parents: dict[int, int]) -> set[int]:
    members = {pid for pid in roots if pid in parents}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in members} - members
        members |= found
        grew = bool(found)
    return members


def tree(roots: Iterable[int]) -> set[int]:
    """The roots and all their descendants."""
    return _tree(roots, _parents())


# kcmp(2) answers whether two processes share one address space; its number per architecture.
_KCMP_SYSCALL = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
_KCMP_VM = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def shares_memory(pid: int, other: int) -> bool:
    """Whether two processes (or threads) run in one address space.

    False when the kernel cannot tell (an unknown architecture, a process gone
    or not ours to inspect), so a doubt counts memory rather than hides it.
    """
    if _KCMP_SYSCALL is None:
        return False
    return _LIBC.syscall(_KCMP_SYSCALL, pid, other, _KCMP_VM, 0, 0) == 0


def tree_rss_bytes(roots: Iterable[int]) -> int:
    """Summed RSS of the trees under `roots`, each address space counted once."""
    parents = _parents()
    members = _tree(roots, parents)
    return sum(
        rss_bytes(pid)
        for pid in members
        if not (parents[pid] in members and shares_memory(parents[pid], pid))
    )


def rss_bytes(pid: int) -> int:
    """Resident set size of one process (0 when it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


class PeakSampler:
    """Samples the summed RSS of the trees under `roots` until stopped; keeps the peak."""

    def __init__(self, roots: Iterable[int], interval: float = 0.5) -> None:
        self.roots = list(roots)
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def sample(self) -> int:
        total = tree_rss_bytes(self.roots)
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
