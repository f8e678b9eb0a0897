"""`lakehouse cdc workload`: TICKIT business transactions by SQL in the real databases.

The current rows are read back from PostgreSQL and MariaDB into the
generator's `SourceDatabase`, and its `Mutator` picks each change the way
the business would (new listings on live events, sales on listings with
tickets left, price cuts, refunds, deletes of unreferenced rows), so every
foreign key stays valid; each transaction is then written as SQL and
committed. Once per run, a third of the way in, each database gets an
`ALTER TABLE ... ADD COLUMN`; two thirds in, a `TRUNCATE` and re-load of a
reference table (as the generator does).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from lakehouse.cdc import sql
from lakehouse.cdc.generate.mutations import Mutator
from lakehouse.cdc.generate.state import Change, SourceDatabase
from lakehouse.cdc.generate.tickit import (
    CATEGORY,
    DATE,
    EVENT,
    LISTING,
    SALES,
    USERS,
    VENUE,
    Table,
)
from lakehouse.cdc.load import connect, live_tables

# (weight, what): the mix of one transaction; each touches one database.
MIX: tuple[tuple[int, str, Table], ...] = (
    (22, "insert", SALES),
    (18, "insert", LISTING),
    (12, "update", LISTING),
    (6, "update", SALES),
    (5, "delete", SALES),
    (5, "delete", LISTING),
    (6, "insert", EVENT),
    (6, "update", EVENT),
    (3, "delete", EVENT),
    (3, "insert", VENUE),
    (4, "update", VENUE),
    (2, "update", CATEGORY),
    (2, "update", DATE),
)


@dataclass(frozen=True)
class WorkloadOptions:
    """How much to run: `transactions`, or `minutes` at `rate` per second."""

    rate: float = 5.0
    minutes: float | None = None
    transactions: int | None = None
    seed: int = 7

    @property
    def total(self) -> int:
        if self.transactions is not None:
            return self.transactions
        return max(1, int((self.minutes or 0) * 60 * self.rate))


@dataclass
class WorkloadSummary:
    """What a workload did, per kind of change."""

    transactions: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    schema_changes: list[str] = field(default_factory=list)
    truncates: list[str] = field(default_factory=list)
    deleted: dict[str, set[int]] = field(default_factory=dict)  # bronze table -> deleted keys
    seconds: float = 0.0

    def count(self, op: str, rows: int = 1) -> None:
        self.changes[op] = self.changes.get(op, 0) + rows

    def line(self) -> str:
        ops = ", ".join(f"{n} {op}" for op, n in sorted(self.changes.items()))
        return (
            f"{self.transactions} transactions in {self.seconds:.1f}s ({ops}); "
            f"added columns: {', '.join(self.schema_changes) or 'none'}; "
            f"truncated and re-loaded: {', '.join(self.truncates) or 'none'}"
        )


def read_state(connections: dict[str, Any]) -> SourceDatabase:
    """The databases' current rows (the generator's columns) as a SourceDatabase."""
    db = SourceDatabase()
    users: set[int] = set()
    for table in live_tables():
        dialect = sql.dialect_of(table)
        connection = connections[dialect.system.name]
        with connection.cursor() as cursor:
            cursor.execute(sql.select_all(dialect, table))
            rows = {
                row[0]: [sql.from_sql(c, v) for c, v in zip(table.columns, row, strict=True)]
                for row in cursor.fetchall()
            }
        connection.commit()
        if not rows and table in (EVENT, LISTING):
            raise UserError(f"{dialect.table(table)} is empty: run `lakehouse cdc load` first")
        db.load(table, rows)
        if table is LISTING:
            users.update(row[1] for row in rows.values())
    # Users live in crm (generated files); sellers are the users the workload needs.
    db.load(USERS, {user: [user] for user in sorted(users)})
    return db


def write_changes(connection: Any, changes: list[Change]) -> None:
    """One statement per change; consecutive inserts of a table as one multi-row INSERT."""
    if not changes:
        return
    table = changes[0].table
    dialect = sql.dialect_of(table)
    with connection.cursor() as cursor:
        inserts = [c.after for c in changes if c.op == "c"]
        if inserts:
            values = [v for row in inserts for v in sql.row_values(table, row)]
            cursor.execute(sql.insert(dialect, table, len(inserts)), values)
        for change in changes:
            if change.op == "u":
                _update(cursor, dialect, table, change)
            elif change.op == "d":
                key = dialect.name(table.key)
                cursor.execute(
                    f"delete from {dialect.table(table)} where {key} = %s", (change.key,)
                )


def _update(cursor: Any, dialect: sql.Dialect, table: Table, change: Change) -> None:
    """UPDATE of the columns that changed only, as an application would write it."""
    assert change.before is not None and change.after is not None
    changed = [
        (column, new)
        for column, old, new in zip(table.columns, change.before, change.after, strict=False)
        if old != new
    ]
    if not changed:
        return
    sets = ", ".join(f"{dialect.name(column.name)} = %s" for column, _ in changed)
    values = [sql.to_sql(column, value) for column, value in changed]
    cursor.execute(
        f"update {dialect.table(table)} set {sets} where {dialect.name(table.key)} = %s",
        (*values, change.key),
    )


def one_transaction(mutator: Mutator, rng: random.Random) -> list[Change]:
    """Pick and apply one business change from the mix (to the state; SQL comes next)."""
    weights = [weight for weight, _, _ in MIX]
    _, op, table = rng.choices(MIX, weights)[0]
    if op == "insert":
        return mutator.insert(table)
    change = mutator.update(table) if op == "update" else mutator.delete(table)
    return [change] if change else []


def add_column(connection: Any, system: str, summary: WorkloadSummary) -> None:
    """ALTER TABLE ... ADD COLUMN (nullable, no default), unless an earlier run added it."""
    table, column, kind, value = sql.ADDED_COLUMNS[system]
    dialect = sql.dialect_of(table)
    with connection.cursor() as cursor:
        cursor.execute(
            "select count(*) from information_schema.columns "
            "where table_schema = %s and table_name = %s and column_name = %s",
            (dialect.prefix, table.source_table, column),
        )
        if cursor.fetchone()[0] == 0:
            cursor.execute(f"alter table {dialect.table(table)} add column {column} {kind}")
            # Some rows get a value at once, so the new column carries data, not only nulls.
            cursor.execute(
                f"update {dialect.table(table)} set {column} = %s "
                f"where mod({dialect.name(table.key)}, 5) = 0",
                (value,),
            )
            summary.schema_changes.append(f"{dialect.table(table)}.{column}")
    connection.commit()


def truncate_and_reload(
    connection: Any, db: SourceDatabase, system: str, summary: WorkloadSummary
) -> None:
    """TRUNCATE a reference table and insert its rows again (a full refresh)."""
    table = sql.TRUNCATED[system]
    dialect = sql.dialect_of(table)
    changes = db.truncate(table)
    with connection.cursor() as cursor:
        cursor.execute(f"truncate table {dialect.table(table)}")
    connection.commit()  # MariaDB commits a TRUNCATE on its own anyway
    write_changes(connection, changes[1:])
    connection.commit()
    summary.truncates.append(dialect.table(table))
    summary.count("truncate")


def _special(
    index: int,
    total: int,
    connections: dict[str, Any],
    db: SourceDatabase,
    summary: WorkloadSummary,
) -> None:
    """The run's schema change (a third in) and truncate (two thirds in), in both databases."""
    for system, connection in connections.items():
        if index == total // 3:
            add_column(connection, system, summary)
        if index == (2 * total) // 3:
            truncate_and_reload(connection, db, system, summary)


def run_workload(
    options: WorkloadOptions,
    conf: Settings | None = None,
    log: Callable[[str], None] = print,
    state_read: threading.Event | None = None,
) -> WorkloadSummary:
    """Run the transactions at the rate (none between them for `--transactions`).

    `state_read` is set once the databases' rows are read: rows written after
    that (a benchmark's probes) are not the workload's to change.
    """
    conf = conf or settings()
    connections = {"ems": connect(conf, CATEGORY), "ecomm": connect(conf, DATE)}
    summary = WorkloadSummary()
    started = time.monotonic()
    try:
        db = read_state(connections)
        if state_read is not None:
            state_read.set()
        mutator, rng = Mutator(db, random.Random(options.seed)), random.Random(options.seed + 1)
        paced = options.minutes is not None
        with ProgressBar(options.total) as advance:
            for index in range(options.total):
                _special(index, options.total, connections, db, summary)
                changes = one_transaction(mutator, rng)
                if changes:
                    connection = connections[sql.dialect_of(changes[0].table).system.name]
                    write_changes(connection, changes)
                    connection.commit()
                    for change in changes:
                        summary.count({"c": "insert", "u": "update", "d": "delete"}[change.op])
                        if change.op == "d":
                            summary.deleted.setdefault(change.table.name, set()).add(change.key)
                summary.transactions += 1
                advance()
                if paced:
                    _pace(started, index + 1, options.rate)
    finally:
        for connection in connections.values():
            connection.close()
    summary.seconds = round(time.monotonic() - started, 2)
    log(summary.line())
    return summary


def _pace(started: float, done: int, rate: float) -> None:
    """Wait until `done` transactions are due at `rate` per second (a schedule, not a poll)."""
    due = started + done / rate
    delay = due - time.monotonic()
    if delay > 0:
        time.sleep(delay)


class ProgressBar:
    """A progress bar of the run; yields the function that advances it."""

    def __init__(self, total: int) -> None:
        from lakehouse import output

        self._progress = output.progress()
        self._task = self._progress.add_task("transactions", total=total)

    def __enter__(self) -> Callable[[], None]:
        self._progress.start()
        return lambda: self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
