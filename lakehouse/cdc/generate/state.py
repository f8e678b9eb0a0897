"""The source databases as the generator holds them: rows, keys, references.

Every change goes through `SourceDatabase`, which keeps the live rows, the
before-image of every deleted key, and how many live rows reference each
parent key, so a change batch can never break a foreign key and the expected
final state is simply what is left here at the end.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from lakehouse.cdc.generate.tickit import SALES, TABLES, Table


class KeyPool:
    """Live keys of one table: O(1) add, remove and uniform random choice."""

    def __init__(self, keys: list[int] | None = None) -> None:
        self._keys: list[int] = list(keys or [])
        self._where: dict[int, int] = {key: i for i, key in enumerate(self._keys)}

    def add(self, key: int) -> None:
        self._where[key] = len(self._keys)
        self._keys.append(key)

    def remove(self, key: int) -> None:
        index = self._where.pop(key)
        last = self._keys.pop()
        if last != key:
            self._keys[index] = last
            self._where[last] = index

    def choice(self, rng: random.Random) -> int:
        return self._keys[rng.randrange(len(self._keys))]

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._where


@dataclass(frozen=True, slots=True)
class Change:
    """One row change as the source committed it (before/after are full row images)."""

    table: Table
    op: str
    key: int | None
    before: list | None
    after: list | None


class SourceDatabase:
    """All seven tables, kept consistent: the generator's single source of truth."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, list]] = {name: {} for name in TABLES}
        self.deleted: dict[str, dict[int, list]] = {name: {} for name in TABLES}
        self.pools: dict[str, KeyPool] = {name: KeyPool() for name in TABLES}
        self.refs: dict[str, Counter[int]] = {name: Counter() for name in TABLES}
        self.sold: Counter[int] = Counter()
        self.next_key: dict[str, int] = dict.fromkeys(TABLES, 1)
        self.schema_version: dict[str, int] = dict.fromkeys(TABLES, 1)
        self._fk_indexes = {
            name: tuple((fk.parent, table.index(fk.column)) for fk in table.foreign_keys)
            for name, table in TABLES.items()
        }

    # ---------- loading

    def load(self, table: Table, rows: dict[int, list]) -> None:
        """Take a table's snapshot rows (keyed, in key order) and index them."""
        self.rows[table.name] = rows
        self.pools[table.name] = KeyPool(list(rows))
        self.next_key[table.name] = max(rows, default=0) + 1
        for row in rows.values():
            self._reference(table, row, +1)

    # ---------- questions

    def row(self, table: Table, key: int) -> list:
        return self.rows[table.name][key]

    def is_referenced(self, table: Table, key: int) -> bool:
        return self.refs[table.name][key] > 0

    def live_count(self, table: Table) -> int:
        return len(self.pools[table.name])

    def remaining_tickets(self, listing: list) -> int:
        return listing[4] - self.sold[listing[0]]

    # ---------- changes

    def take_key(self, table: Table) -> int:
        """A key never used before in the table (deleted keys are not reused)."""
        key = self.next_key[table.name]
        self.next_key[table.name] = key + 1
        return key

    def insert(self, table: Table, row: list) -> Change:
        key = row[0]
        self.rows[table.name][key] = row
        self.deleted[table.name].pop(key, None)
        self.pools[table.name].add(key)
        self.next_key[table.name] = max(self.next_key[table.name], key + 1)
        self._reference(table, row, +1)
        return Change(table, "c", key, None, row)

    def update(self, table: Table, key: int, row: list) -> Change:
        before = self.rows[table.name][key]
        self._reference(table, before, -1)
        self._reference(table, row, +1)
        self.rows[table.name][key] = row
        return Change(table, "u", key, before, row)

    def delete(self, table: Table, key: int) -> Change:
        before = self.rows[table.name].pop(key)
        self.pools[table.name].remove(key)
        self.deleted[table.name][key] = before
        self._reference(table, before, -1)
        return Change(table, "d", key, before, None)

    def truncate(self, table: Table) -> list[Change]:
        """TRUNCATE, then the same rows inserted again so every reference still holds.

        Returns the truncate (no key, no images) followed by one insert per row,
        in key order, as one re-load transaction would produce them.
        """
        rows = sorted(self.rows[table.name].items())
        changes = [Change(table, "t", None, None, None)]
        changes.extend(Change(table, "c", key, None, row) for key, row in rows)
        return changes

    def add_column(self, table: Table) -> None:
        """ALTER TABLE ... ADD COLUMN (nullable): every row, live or deleted, gets a null."""
        self.schema_version[table.name] += 1
        for images in (self.rows[table.name], self.deleted[table.name]):
            for key, row in images.items():
                images[key] = [*row, None]

    # ---------- bookkeeping

    def _reference(self, table: Table, row: list, delta: int) -> None:
        for parent, index in self._fk_indexes[table.name]:
            self.refs[parent][row[index]] += delta
        if table is SALES:
            self.sold[row[1]] += delta * row[6]
