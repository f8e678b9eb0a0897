"""`lakehouse cdc load`: the TICKIT tables of ems and ecomm, created and loaded for real.

The rows are the generator's snapshot at the scale (lakehouse/cdc/generate),
written by SQL in chunks of committed transactions, so Debezium captures them
as any application's inserts. `users` belongs to crm (SQL Server, not
installable here) and stays on generated files.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from typing import Any

from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from lakehouse.cdc import databases, sql
from lakehouse.cdc.generate.options import GenerateOptions
from lakehouse.cdc.generate.population import populate
from lakehouse.cdc.generate.tickit import TABLES, USERS, Table

CHUNK_ROWS = 2_000


def live_tables() -> list[Table]:
    """The tables the chain's databases hold, parents before children."""
    order = ["category", "venue", "event", "date", "listing", "sales"]
    return [TABLES[name] for name in order if TABLES[name] is not USERS]


def connect(conf: Settings, table: Table) -> Any:
    return (
        databases.postgres(conf)
        if sql.dialect_of(table) is sql.POSTGRES
        else databases.mariadb(conf)
    )


def _exists(connection: Any, dialect: sql.Dialect, table: Table) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = %s and table_name = %s",
            (dialect.prefix, table.source_table),
        )
        found = cursor.fetchone()[0] > 0
    connection.commit()
    return found


def loaded(conf: Settings) -> bool:
    """True when `cdc load` has run: its last table exists."""
    last = live_tables()[-1]
    with closing(connect(conf, last)) as connection:
        return _exists(connection, sql.dialect_of(last), last)


def load_table(conf: Settings, table: Table, rows: dict[int, list]) -> None:
    """Create one table and insert its rows, a committed transaction per chunk."""
    dialect = sql.dialect_of(table)
    with closing(connect(conf, table)) as connection:
        if _exists(connection, dialect, table):
            raise UserError(
                f"{dialect.table(table)} exists already: the chain is loaded; to start over, "
                f"`lakehouse cdc down` and remove {conf.home / 'cdc'}"
            )
        with connection.cursor() as cursor:
            cursor.execute(sql.create_table(dialect, table))
            if dialect is sql.POSTGRES:
                # Full before-images in updates and deletes, as MariaDB's binlog gives them.
                cursor.execute(f"alter table {dialect.table(table)} replica identity full")
        connection.commit()
        values = [sql.row_values(table, row) for _, row in sorted(rows.items())]
        for start in range(0, len(values), CHUNK_ROWS):
            with connection.cursor() as cursor:
                cursor.executemany(sql.insert(dialect, table), values[start : start + CHUNK_ROWS])
            connection.commit()


def load(
    scale: float, seed: int, conf: Settings | None = None, log: Callable[[str], None] = print
) -> dict[str, int]:
    """Create and load every live table at `scale`; return the rows per table."""
    conf = conf or settings()
    started = time.monotonic()
    db = populate(seed, scale)
    counts = {}
    for table in live_tables():
        load_table(conf, table, db.rows[table.name])
        counts[table.name] = len(db.rows[table.name])
        log(f"{sql.dialect_of(table).table(table)}: {counts[table.name]} rows")
    log(
        f"loaded {sum(counts.values())} rows into {len(counts)} tables (ems on PostgreSQL, "
        f"ecomm on MariaDB) at scale {scale} in {time.monotonic() - started:.1f}s"
    )
    return counts


def load_unless_loaded(scale: float, conf: Settings, log: Callable[[str], None] = print) -> bool:
    """Load the chain at `scale` with the generator's seed unless an earlier load did;
    True when it loaded now (an earlier load keeps its own scale)."""
    if loaded(conf):
        return False
    load(scale, seed=GenerateOptions.seed, conf=conf, log=log)
    return True
