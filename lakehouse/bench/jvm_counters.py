"""A running JVM's heap, read from its performance counters (hsperfdata), without attaching.

Every HotSpot JVM publishes its counters in a memory-mapped file,
`<tmp>/hsperfdata_<user>/<pid>`, which `jstat` reads. Reading it directly
costs a file read; starting `jstat` costs a JVM start, about a third of a
core-second, too much to sample each second on a two-core machine beside
the processes being measured. The file's layout is HotSpot's
`PerfDataPrologue` and `PerfDataEntry` (perfMemory.hpp): a header, then
entries of a name, a type and a value.
"""

from __future__ import annotations

import os
import pwd
import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0xCAFEC0C0
OLD_USED = "sun.gc.generation.1.space.0.used"  # G1's (and every collector's) old generation
YOUNG_USED = ("sun.gc.generation.0.space.0.used", "sun.gc.generation.0.space.1.used",
              "sun.gc.generation.0.space.2.used")  # eden and the two survivors  # fmt: skip
# Under G1 (Java 17's default, which every JVM of the project runs) the old
# generation may take the whole heap: its maximum capacity is the -Xmx limit.
MAX_HEAP = "sun.gc.generation.1.space.0.maxCapacity"


@dataclass(frozen=True)
class Heap:
    """One reading of a JVM's heap, in bytes."""

    old_used: int
    used: int  # young and old
    max_bytes: int  # the heap's limit (-Xmx)


def counters_file(pid: int) -> Path:
    """Where HotSpot keeps the counters of `pid` (a JVM of this user's)."""
    user = pwd.getpwuid(os.geteuid()).pw_name
    return Path(tempfile.gettempdir()) / f"hsperfdata_{user}" / str(pid)


def read_longs(data: bytes) -> dict[str, int]:
    """Every 64-bit counter of a perf data file, by name."""
    magic = struct.unpack_from(">I", data, 0)[0]
    if magic != MAGIC:
        raise ValueError("not a HotSpot perf data file")
    order = ">" if data[4] == 0 else "<"  # byte_order: 0 big endian, 1 little
    entry_offset, entries = struct.unpack_from(order + "ii", data, 24)
    values: dict[str, int] = {}
    position = entry_offset
    for _ in range(entries):
        length, name_offset, vector_length, kind = struct.unpack_from(
            order + "iiic", data, position
        )
        data_offset = struct.unpack_from(order + "i", data, position + 16)[0]
        if kind == b"J" and vector_length == 0:
            name_start = position + name_offset
            name = data[name_start : data.index(b"\0", name_start)].decode()
            values[name] = struct.unpack_from(order + "q", data, position + data_offset)[0]
        position += length
    return values


def heap(pid: int) -> Heap | None:
    """The JVM's heap now, or None when it has no counters (gone, or -XX:-UsePerfData).

    A JVM killed with SIGKILL leaves its counters file behind: only a live pid's is read.
    """
    if not Path(f"/proc/{pid}").exists():
        return None
    try:
        values = read_longs(counters_file(pid).read_bytes())
    except (OSError, ValueError, struct.error):
        return None
    if OLD_USED not in values:
        return None
    old = values[OLD_USED]
    return Heap(
        old_used=old,
        used=old + sum(values.get(name, 0) for name in YOUNG_USED),
        max_bytes=values.get(MAX_HEAP, 0),
    )


# A row of `jcmd PID GC.class_histogram`: rank, instances, bytes, class name (and module).
HISTOGRAM_ROW = re.compile(r"^\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)")


def class_histogram(pid: int, top: int = 40) -> list[tuple[str, int, int]]:
    """The live objects' classes holding most bytes: (class, instances, bytes), largest first.

    What fills a heap that grows, as `jmap -histo:live` shows it. It counts
    live objects, so the JVM runs a full collection first: a pause of about a
    second per GiB held, taken rarely (soak.py: early and late in a run).
    Empty when the JVM is gone or does not answer.
    """
    try:
        done = subprocess.run(
            ["jcmd", str(pid), "GC.class_histogram"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    rows = [m.groups() for line in done.stdout.splitlines() if (m := HISTOGRAM_ROW.match(line))]
    return [(name, int(count), int(size)) for count, size, name in rows[:top]]


def grown(
    early: list[tuple[str, int, int]], late: list[tuple[str, int, int]], top: int = 10
) -> list[tuple[str, int, int]]:
    """The classes whose live bytes grew most between two histograms: (class, bytes, instances)
    grown, a class absent from the early one counted from zero."""
    before = {name: (count, size) for name, count, size in early}
    growth = [
        (name, size - before.get(name, (0, 0))[1], count - before.get(name, (0, 0))[0])
        for name, count, size in late
    ]
    return sorted((g for g in growth if g[1] > 0), key=lambda g: -g[1])[:top]
