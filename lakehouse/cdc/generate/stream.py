"""The event stream: the snapshot, then change batches with real pipelines' faults.

Batch 0 is each connector's initial snapshot (`op` = `r`, `source.snapshot`
"true", "last" on a connector's final record). Batch k >= 1 is one day of
changes in commit order across all tables, and carries the faults ingestion
must survive:

- every delete is followed by a tombstone for its key;
- redelivered duplicates: a run of a partition's events is delivered again
  right after it (as after a connector restart), at later offsets;
- late events: a key is updated twice; the older update is delivered only
  at the start of the next batch, so a newer change for the key sits in an
  earlier-offset file than an older one;
- from `schema_change_batch` on, `users` has the `loyaltytier` column;
- in `truncate_batch`, the chosen table is truncated (`op` = `t`) and its
  rows inserted again in one statement, so references still hold.

Batch k depends only on the seed, the scale and batches before it, never on
how many batches were asked for: that is what makes output prefix-stable.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, time

from lakehouse.cdc.generate.debezium import Event
from lakehouse.cdc.generate.mutations import Mutator
from lakehouse.cdc.generate.options import GenerateOptions
from lakehouse.cdc.generate.positions import PositionClock, clock_for
from lakehouse.cdc.generate.seeds import derive_rng
from lakehouse.cdc.generate.state import Change, SourceDatabase
from lakehouse.cdc.generate.tickit import SYSTEMS, TABLES, USERS, Table, tables_of

_SNAPSHOT_START = time(2, 0)
_SNAPSHOT_ROWS_PER_MS = 20
_DAY_MS = 86_400_000
_CHANGES_START_MS = 5 * 60_000
_CHANGES_SPAN_MS = 22 * 3_600_000


@dataclass(slots=True)
class Unit:
    """One record for a topic partition: an event, and a tombstone after a delete."""

    event: Event
    partition: int
    tombstone: bool = False
    duplicate: bool = False
    late: bool = False


@dataclass
class Batch:
    """A change batch's records per topic, in delivery order per partition."""

    number: int
    units: dict[str, list[Unit]] = field(default_factory=dict)
    truncated: str | None = None
    schema_change: str | None = None


def day_start_ms(options: GenerateOptions, batch: int) -> int:
    """Midnight UTC of the day batch `batch` lands on, in epoch milliseconds."""
    day = datetime.combine(options.snapshot_day, time(0), tzinfo=UTC)
    return int(day.timestamp()) * 1000 + batch * _DAY_MS


def partition_of(key: int | None, key_field: str, partitions: int) -> int:
    """Kafka's default partitioner: murmur2 of the serialized key, modulo partitions.

    The key bytes are the schemaless JSON key (`{"salesid":42}`); a truncate has
    no key and goes to partition 0.
    """
    if partitions == 1 or key is None:
        return 0
    data = f'{{"{key_field}":{key}}}'.encode()
    return (murmur2(data) & 0x7FFFFFFF) % partitions


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2` (seed 0x9747b28c), as a signed 32-bit int."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length // 4
    for (k,) in struct.iter_unpack("<I", data[: whole * 4]):
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = data[whole * 4 :]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


class StreamBuilder:
    """Turns the source databases' history into Debezium events, batch by batch."""

    def __init__(self, options: GenerateOptions, db: SourceDatabase) -> None:
        self.options = options
        self.db = db
        self.clocks: dict[str, PositionClock] = {
            system.name: clock_for(
                system,
                options.debezium_version,
                options.topic_prefix,
                derive_rng(options.seed, "positions", system.name),
            )
            for system in SYSTEMS
        }
        self._late: dict[str, list[Unit]] = {}

    # ---------- snapshot

    def snapshot(self, table: Table) -> Iterator[Unit]:
        """The table's snapshot records in key order, as its connector reads them."""
        system_tables = tables_of(table.system)
        offset_rows = sum(
            self.db.live_count(t) for t in system_tables[: system_tables.index(table)]
        )
        is_last_table = table is system_tables[-1]
        clock = self.clocks[table.system.name]
        start = day_start_ms(self.options, 0) + _ms_of(_SNAPSHOT_START)
        start += SYSTEMS.index(table.system) * 3_000
        rng = derive_rng(self.options.seed, "snapshot-lag", table.name)
        rows = self.db.rows[table.name]
        last_key = next(reversed(rows)) if rows else None
        version = self.db.schema_version[table.name]
        for i, (key, row) in enumerate(rows.items()):
            ts_ms = start + (offset_rows + i) // _SNAPSHOT_ROWS_PER_MS
            marker = "last" if is_last_table and key == last_key else "true"
            source = clock.snapshot(table, ts_ms, marker)
            event = Event(table, "r", key, None, row, source, ts_ms + rng.randint(1, 40), version)
            yield Unit(event, self._partition(table, key))

    # ---------- change batches

    def change_batch(self, number: int) -> Batch:
        """Batch `number` (>= 1): plan, apply and serialise one day of changes."""
        options, db = self.options, self.db
        rng = derive_rng(options.seed, "batch", number)
        batch = Batch(number)
        for clock in self.clocks.values():
            clock.begin_batch(number)
        if number == options.schema_change_batch:
            db.add_column(USERS)
            batch.schema_change = USERS.name
        plan = self._plan(rng, number)
        if number == options.truncate_batch and options.truncate_table:
            middle = len(plan) // 2
            plan.insert(
                rng.randint(middle // 2, middle + middle // 2), ("t", options.truncate_table)
            )
            batch.truncated = options.truncate_table
        fresh = self._apply(rng, number, plan)
        for table in TABLES.values():
            own = fresh.get(table.topic, [])
            late_now = [unit for unit in own if unit.late]
            kept = [unit for unit in own if not unit.late]
            carried = self._late.pop(table.topic, [])
            self._late[table.topic] = late_now
            batch.units[table.topic] = self._deliver(rng, carried, kept)
        return batch

    def _plan(self, rng: random.Random, number: int) -> list[tuple]:
        """Which operations the batch runs, shuffled into one commit order."""
        weights = self.options.op_mix.weights()
        plan: list[tuple] = []
        for table in TABLES.values():
            count = max(1, round(self.options.change_fraction * self.db.live_count(table)))
            plan.extend((op, table.name) for op in rng.choices("cud", weights, k=count))
            plan.extend(("late", table.name) for _ in range(self.options.late_updates_per_topic))
        rng.shuffle(plan)
        return plan

    def _apply(self, rng: random.Random, number: int, plan: list[tuple]) -> dict[str, list[Unit]]:
        """Run the plan against the databases; return each topic's units in commit order."""
        mutator = Mutator(self.db, rng)
        units: dict[str, list[Unit]] = {}
        late_keys: dict[str, set[int]] = {}
        day_ms = day_start_ms(self.options, number)
        # Each late update schedules one more update later on: count it in the spacing.
        expected = len(plan) + sum(1 for entry in plan if entry[0] == "late")
        step = _CHANGES_SPAN_MS // max(1, expected + 1)
        i = 0
        while i < len(plan):
            entry = plan[i]
            op, table = entry[0], TABLES[entry[1]]
            ts_ms = day_ms + _CHANGES_START_MS + i * step + rng.randrange(max(1, step))
            late = False
            if op == "c":
                statements = [mutator.insert(table)]
            elif op == "u":
                statements = [[mutator.update(table)]]
            elif op == "d":
                statements = [[mutator.delete(table)]]
            elif op == "t":
                changes = self.db.truncate(table)
                statements = [changes[:1], changes[1:]]
            elif op == "again":
                statements = [[mutator.update(table, entry[2])]]
            else:
                change = self._late_update(mutator, rng, table, late_keys)
                statements = [[change]]
                if change is not None:
                    late = True
                    plan.insert(rng.randint(i + 1, len(plan)), ("again", table.name, change.key))
            for changes in statements:
                self._emit(rng, units, [c for c in changes if c is not None], ts_ms, late)
            i += 1
        return units

    def _late_update(
        self, mutator: Mutator, rng: random.Random, table: Table, late_keys: dict[str, set[int]]
    ) -> Change | None:
        """Update a key not already chosen for a late update in this batch."""
        taken = late_keys.setdefault(table.name, set())
        pool = self.db.pools[table.name]
        for _ in range(16):
            if not len(pool):
                return None
            key = pool.choice(rng)
            if key not in taken:
                taken.add(key)
                return mutator.update(table, key)
        return None

    def _emit(
        self,
        rng: random.Random,
        units: dict[str, list[Unit]],
        changes: list[Change],
        ts_ms: int,
        late: bool,
    ) -> None:
        """One committed statement: positions from the table's clock, one unit per row."""
        if not changes:
            return
        table = changes[0].table
        blocks = self.clocks[table.system.name].statement(table, [c.op for c in changes], ts_ms)
        version = self.db.schema_version[table.name]
        topic_units = units.setdefault(table.topic, [])
        lag = rng.randint(20, 900)
        for change, source in zip(changes, blocks, strict=True):
            event = Event(
                table,
                change.op,
                change.key,
                change.before,
                change.after,
                source,
                ts_ms + lag,
                version,
            )
            partition = self._partition(table, change.key)
            topic_units.append(Unit(event, partition, tombstone=change.op == "d", late=late))

    def _deliver(self, rng: random.Random, carried: list[Unit], own: list[Unit]) -> list[Unit]:
        """Per partition: last batch's late units first, then this batch's with a redelivery."""
        delivered: list[Unit] = []
        for partition in range(self.options.partitions):
            late = [
                Unit(u.event, u.partition, u.tombstone, late=True)
                for u in carried
                if u.partition == partition
            ]
            mine = [u for u in own if u.partition == partition]
            delivered.extend(late)
            delivered.extend(self._redeliver(rng, mine))
        return delivered

    def _redeliver(self, rng: random.Random, units: list[Unit]) -> list[Unit]:
        """Deliver a run of the partition's units a second time, right after the run."""
        if not units or self.options.duplicate_fraction <= 0:
            return units
        length = max(1, round(self.options.duplicate_fraction * len(units)))
        start = rng.randrange(len(units) - length + 1) if length < len(units) else 0
        end = start + min(length, len(units))
        copies = [Unit(u.event, u.partition, u.tombstone, duplicate=True) for u in units[start:end]]
        return [*units[:end], *copies, *units[end:]]

    def _partition(self, table: Table, key: int | None) -> int:
        return partition_of(key, table.key, self.options.partitions)


def _ms_of(moment: time) -> int:
    return ((moment.hour * 60 + moment.minute) * 60 + moment.second) * 1000
