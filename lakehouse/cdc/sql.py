"""TICKIT tables in the chain's real databases: DDL, values and statements per dialect.

The tables and columns are the generator's (lakehouse/cdc/generate/tickit.py)
in each database's own types: PostgreSQL `numeric(8,2)`, `timestamp`,
`smallint`, `boolean`; MariaDB `decimal(8,2)`, `datetime` (Debezium's
millisecond Timestamp, as conf/tables.yml declares), `smallint`, `boolean`.
Rows move between the generator's plain values (days, seconds, cents) and
the drivers' Python values here, in one place.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from lakehouse.cdc.generate.tickit import (
    CATEGORY,
    DATE,
    ECOMM,
    EMS,
    EVENT,
    LISTING,
    SALES,
    VENUE,
    Column,
    SourceSystem,
    Table,
)

EPOCH = date(1970, 1, 1)

# Foreign keys the databases enforce: within one database, and never on a table the
# workload truncates (PostgreSQL refuses to truncate a referenced table).
ENFORCED_REFERENCES = {EVENT.name: ("venueid", VENUE), SALES.name: ("listid", LISTING)}
# The tables a workload truncates and re-loads, per database (as the generator does).
TRUNCATED = {"ems": CATEGORY, "ecomm": DATE}
# The column a workload adds, per database: nullable, no default, so existing rows hold null.
# The value is what the rows whose key is a multiple of 5 get at once.
ADDED_COLUMNS = {
    "ems": (VENUE, "venueurl", "varchar(100)", "https://venues.example/tickit"),
    "ecomm": (LISTING, "channel", "varchar(10)", "web"),
}


@dataclass(frozen=True)
class Dialect:
    """How one database spells names and types."""

    system: SourceSystem
    quote: str
    prefix: str  # schema or database qualifier of the tables

    def name(self, identifier: str) -> str:
        return f"{self.quote}{identifier}{self.quote}"

    def table(self, table: Table) -> str:
        return f"{self.prefix}.{self.name(table.source_table)}"

    def sql_type(self, column: Column) -> str:
        kind = column.kind
        if kind == "decimal":
            return column.sql_type.replace("decimal", "numeric" if self is POSTGRES else "decimal")
        if kind == "int":
            return "integer" if self is POSTGRES else "int"
        if kind == "timestamp" and self is MARIADB:
            return "datetime"
        return column.sql_type


POSTGRES = Dialect(EMS, '"', "ems")
MARIADB = Dialect(ECOMM, "`", "ecomm")


def create_table(dialect: Dialect, table: Table) -> str:
    """CREATE TABLE with the key, NOT NULLs, defaults and the enforced reference."""
    lines = []
    for column in table.columns:
        line = f"{dialect.name(column.name)} {dialect.sql_type(column)}"
        if not column.nullable:
            line += " not null"
        if column.default is not None:
            line += f" default {str(column.default).lower()}"
        lines.append(line)
    lines.append(f"primary key ({dialect.name(table.key)})")
    if table.name in ENFORCED_REFERENCES:
        column, parent = ENFORCED_REFERENCES[table.name]
        lines.append(
            f"foreign key ({dialect.name(column)}) references "
            f"{dialect.table(parent)} ({dialect.name(parent.key)})"
        )
    return f"create table {dialect.table(table)} (\n  " + ",\n  ".join(lines) + "\n)"


def to_sql(column: Column, value: object) -> object:
    """A generator value as the driver's Python value."""
    if value is None:
        return None
    if column.kind == "date":
        return EPOCH + timedelta(days=int(value))  # type: ignore[arg-type]
    if column.kind == "timestamp":
        return datetime.fromtimestamp(int(value), UTC).replace(tzinfo=None)  # type: ignore[arg-type]
    if column.kind == "decimal":
        return Decimal(int(value)) / 100  # type: ignore[arg-type]
    return value


def from_sql(column: Column, value: object) -> object:
    """A driver's value as the generator holds it (the inverse of `to_sql`)."""
    if value is None:
        return None
    if column.kind == "date":
        return (value - EPOCH).days  # type: ignore[operator]
    if column.kind == "timestamp":
        return calendar.timegm(value.timetuple())  # type: ignore[attr-defined]
    if column.kind == "decimal":
        return int(value * 100)  # type: ignore[operator]
    if column.kind == "boolean":
        return bool(value)
    return value


def row_values(table: Table, row: Sequence[object]) -> tuple[object, ...]:
    return tuple(to_sql(c, v) for c, v in zip(table.columns, row, strict=False))


def insert(dialect: Dialect, table: Table, count: int = 1) -> str:
    """INSERT of `count` rows with %s placeholders (both drivers' paramstyle)."""
    names = ", ".join(dialect.name(c.name) for c in table.columns)
    one = "(" + ", ".join(["%s"] * len(table.columns)) + ")"
    return f"insert into {dialect.table(table)} ({names}) values " + ", ".join([one] * count)


def select_all(dialect: Dialect, table: Table, columns: Sequence[str] | None = None) -> str:
    names = ", ".join(dialect.name(c) for c in (columns or table.column_names))
    return f"select {names} from {dialect.table(table)} order by {dialect.name(table.key)}"


def dialect_of(table: Table) -> Dialect:
    return POSTGRES if table.system is EMS else MARIADB
