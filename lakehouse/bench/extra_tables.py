"""`bench latency --extra-tables N`: the continuous service serving N small tables beside TICKIT.

A whole database is a few large tables and many small ones. The service then
runs on a copy of the project whose `conf/tables.yml` lists N one-row tables
more (`extra_t000`, ...; the rest of the project is linked, not copied), each
with its snapshot row landed before the service starts. The change stream
carries one change of one small table in every flush, in turn, so each of
them changes every N flushes while the TICKIT tables change beside it (or,
idle, none after the snapshot: what tables nobody writes to cost). At the
end every small table's row must hold its last change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.settings import Settings
from lakehouse import thrift_client
from lakehouse.bench.latency_feed import Record
from lakehouse.bench.many_tables import event_line
from lakehouse.project_copy import project_copy

TOPIC_PREFIX = "bench.extra"


@dataclass
class ExtraTables:
    """N small tables: their config entries, snapshot files, changes and expected rows."""

    count: int
    project: Path  # the project copy the service runs in
    changing: bool = True  # False: the snapshot row only, as tables nobody writes to
    written: dict[int, list[str]] = field(default_factory=dict)  # table -> values, in order

    def name(self, n: int) -> str:
        return f"extra_t{n:03d}"

    def topic(self, n: int) -> str:
        return f"{TOPIC_PREFIX}.t{n:03d}"

    def make_project(self) -> Path:
        """conf/ copied with the N entries appended; every other top-level entry linked."""
        project_copy(self.project, ["conf"])
        with (self.project / "conf" / "tables.yml").open("a") as tables:
            for n in range(self.count):
                tables.write(
                    f"\n  {self.name(n)}:\n    buckets: 1\n    source: ems\n"
                    f"    topic: {self.topic(n)}\n    key: [id]\n"
                    "    columns: {id: int32, v: string}\n"
                )
        return self.project

    def record(self, n: int, value: str, op: str) -> Record:
        """The next change of table n, at the next offset of its topic."""
        values = self.written.setdefault(n, [])
        values.append(value)
        offset = len(values) - 1
        line = event_line(self.name(n), value, 100 + offset, op)
        return Record(self.topic(n), 0, offset, f"topics/{self.topic(n)}", line)

    def snapshot(self) -> list[Record]:
        return [self.record(n, "snapshot", "r") for n in range(self.count)]

    def interleave(self, stream: Iterator[Record], rate: int) -> Iterator[Record]:
        """The stream with one small table's change in every `rate` records, tables in turn."""
        if not self.changing:
            yield from stream
            return
        changes = 0
        for index, record in enumerate(stream):
            if index % max(1, rate - 1) == 0:
                n = changes % self.count
                yield self.record(n, f"change {changes}", "u")
                changes += 1
            yield record

    def keys(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        return {self.topic(n): (self.name(n), ("id",)) for n in range(self.count)}

    def check(self, conf: Settings, database: str) -> dict[str, object]:
        """Every small table's row against its last change, through the Thrift server."""
        query = " union all ".join(
            f"select '{self.name(n)}', v from {database}.`{self.name(n)}`"
            for n in range(self.count)
        )
        found = dict(thrift_client.execute(query, conf).rows)
        wrong = [
            self.name(n)
            for n in range(self.count)
            if found.get(self.name(n)) != self.written[n][-1]
        ]
        return {"extra_tables_match": not wrong, "extra_tables_differing": wrong[:10]}
