"""Where each change sits in its source's log: the connector-specific `source` fields.

One clock per source system hands out positions that only go up in commit
order: PostgreSQL WAL LSNs and transaction ids, MySQL binlog file / position /
row (a new binlog file per change batch, as after a log rotation), SQL Server
commit LSN / change LSN / event serial number. The `source` blocks carry the
fields of Debezium 2.x for that connector, in Debezium's order.
"""

from __future__ import annotations

import random
from typing import Any

from lakehouse.cdc.generate.tickit import SourceSystem, Table


class PositionClock:
    """The shared part: connector facts and the block's leading fields."""

    def __init__(self, system: SourceSystem, version: str, prefix: str) -> None:
        self.system = system
        self._head = {"version": version, "connector": system.connector, "name": prefix}

    def _block(self, ts_ms: int, snapshot: str) -> dict[str, Any]:
        return {
            **self._head,
            "ts_ms": ts_ms,
            "snapshot": snapshot,
            "db": self.system.database,
            "sequence": None,
        }

    def begin_batch(self, batch: int) -> None:
        """Called before each change batch (MySQL rotates its binlog here)."""

    def snapshot(self, table: Table, ts_ms: int, marker: str) -> dict[str, Any]:
        raise NotImplementedError

    def statement(self, table: Table, ops: list[str], ts_ms: int) -> list[dict[str, Any]]:
        """One committed statement changing len(ops) rows: one block per row."""
        raise NotImplementedError


class PostgresClock(PositionClock):
    """pgoutput positions: a WAL LSN per change, a txId per transaction."""

    def __init__(self, system: SourceSystem, version: str, prefix: str, rng: random.Random):
        super().__init__(system, version, prefix)
        self._rng = rng
        self.lsn = rng.randrange(3_600_000_000_000, 3_700_000_000_000)
        self.tx_id = rng.randrange(200_000, 300_000)
        # Streaming resumes from the snapshot's consistent point.
        self.last_commit_lsn = self.lsn

    def _pg_block(self, table: Table, ts_ms: int, snapshot: str, sequence: str) -> dict:
        block = self._block(ts_ms, snapshot)
        block["sequence"] = sequence
        block["schema"] = self.system.schema
        block["table"] = table.source_table
        block["txId"] = self.tx_id
        block["lsn"] = self.lsn
        block["xmin"] = None
        return block

    def snapshot(self, table: Table, ts_ms: int, marker: str) -> dict[str, Any]:
        return self._pg_block(table, ts_ms, marker, f'[null,"{self.lsn}"]')

    def statement(self, table: Table, ops: list[str], ts_ms: int) -> list[dict[str, Any]]:
        self.tx_id += self._rng.randint(1, 4)
        self.lsn += self._rng.randint(200, 2_000)
        last = f'"{self.last_commit_lsn}"'
        blocks = []
        for _ in ops:
            self.lsn += self._rng.randint(56, 480)
            blocks.append(self._pg_block(table, ts_ms, "false", f'[{last},"{self.lsn}"]'))
        self.lsn += self._rng.randint(24, 96)
        self.last_commit_lsn = self.lsn
        return blocks


class MySqlClock(PositionClock):
    """Binlog positions: file and event position per statement, row within it."""

    FILE_STEM = "mysql-bin-changelog"

    def __init__(self, system: SourceSystem, version: str, prefix: str, rng: random.Random):
        super().__init__(system, version, prefix)
        self._rng = rng
        self.first_file = rng.randrange(100, 900)
        self.file_number = self.first_file
        self.pos = rng.randrange(1_000, 90_000_000)
        self.server_id = rng.randrange(1_000_000_000, 2_000_000_000)
        self.server_uuid = "-".join(
            f"{rng.getrandbits(bits):0{bits // 4}x}" for bits in (32, 16, 16, 16, 48)
        )
        self.gtid_number = rng.randrange(1_000, 100_000)
        self.thread = rng.randrange(100, 10_000)

    @property
    def file(self) -> str:
        return f"{self.FILE_STEM}.{self.file_number:06d}"

    def begin_batch(self, batch: int) -> None:
        self.file_number = self.first_file + batch
        self.pos = 157
        self.thread += self._rng.randint(1, 50)

    def _my_block(self, table: Table, ts_ms: int, snapshot: str, row: int, **extra) -> dict:
        block = self._block(ts_ms, snapshot)
        block["table"] = table.source_table
        block["server_id"] = extra.get("server_id", self.server_id)
        block["gtid"] = extra.get("gtid")
        block["file"] = self.file
        block["pos"] = self.pos
        block["row"] = row
        block["thread"] = extra.get("thread")
        block["query"] = None
        return block

    def snapshot(self, table: Table, ts_ms: int, marker: str) -> dict[str, Any]:
        return self._my_block(table, ts_ms, marker, 0, server_id=0)

    def statement(self, table: Table, ops: list[str], ts_ms: int) -> list[dict[str, Any]]:
        self.gtid_number += 1
        gtid = f"{self.server_uuid}:{self.gtid_number}"
        blocks = [
            self._my_block(table, ts_ms, "false", row, gtid=gtid, thread=self.thread)
            for row in range(len(ops))
        ]
        self.pos += 250 + 60 * len(ops) + self._rng.randint(0, 400)
        return blocks


class SqlServerClock(PositionClock):
    """SQL Server CDC positions: LSNs written as VLF:block:slot in hex."""

    def __init__(self, system: SourceSystem, version: str, prefix: str, rng: random.Random):
        super().__init__(system, version, prefix)
        self._rng = rng
        self.lsn = (rng.randrange(0x20, 0x40) << 48) | (rng.randrange(0x400, 0x8000) << 16)

    @staticmethod
    def format_lsn(lsn: int) -> str:
        return f"{lsn >> 48:08x}:{(lsn >> 16) & 0xFFFFFFFF:08x}:{lsn & 0xFFFF:04x}"

    def _ms_block(
        self,
        table: Table,
        ts_ms: int,
        snapshot: str,
        change: str | None,
        commit: str,
        serial: int | None,
    ) -> dict[str, Any]:
        block = self._block(ts_ms, snapshot)
        block["schema"] = self.system.schema
        block["table"] = table.source_table
        block["change_lsn"] = change
        block["commit_lsn"] = commit
        block["event_serial_no"] = serial
        return block

    def snapshot(self, table: Table, ts_ms: int, marker: str) -> dict[str, Any]:
        return self._ms_block(table, ts_ms, marker, None, self.format_lsn(self.lsn), None)

    def statement(self, table: Table, ops: list[str], ts_ms: int) -> list[dict[str, Any]]:
        self.lsn += self._rng.randint(0x10, 0x400) << 16
        changes = []
        for _ in ops:
            self.lsn += self._rng.randint(1, 6)
            changes.append(self.format_lsn(self.lsn))
        self.lsn += self._rng.randint(1, 4)
        commit = self.format_lsn(self.lsn)
        return [
            self._ms_block(table, ts_ms, "false", change, commit, 2 if op == "u" else 1)
            for change, op in zip(changes, ops, strict=True)
        ]


def clock_for(system: SourceSystem, version: str, prefix: str, rng: random.Random):
    """The position clock of a source system's connector."""
    kinds = {"postgresql": PostgresClock, "mysql": MySqlClock, "sqlserver": SqlServerClock}
    return kinds[system.connector](system, version, prefix, rng)
