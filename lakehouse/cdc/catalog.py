"""A source table as its database's catalog describes it, and its column types in the config.

`lakehouse tables add` writes a conf/tables.yml entry from this: the columns,
their SQL types, the primary key and (PostgreSQL) the replica identity, read
from information_schema and pg_catalog of the chain's PostgreSQL (ems) and
MariaDB (ecomm). Each SQL type becomes the config's type name for what
Debezium emits with the connector's own settings (conf/cdc/*.connector.json:
decimal, time precision, interval and unsigned-bigint modes, the TINYINT(1)
boolean converter), so the config never disagrees with the events.
TYPE_MAP is the one table of that mapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from ingestion.errors import UserError
from ingestion.settings import Settings
from lakehouse.cdc import databases

POSTGRES = "postgresql"
MARIADB = "mariadb"
BOOLEAN_CONVERTER = "TinyIntOneToBooleanConverter"
# Debezium's defaults of the connector settings the mapping depends on.
DEFAULT_TIME_PRECISION = {POSTGRES: "adaptive", MARIADB: "adaptive_time_microseconds"}


@dataclass(frozen=True)
class CatalogColumn:
    """One column as information_schema has it (`base`: PostgreSQL udt_name, MariaDB data_type)."""

    name: str
    base: str
    column_type: str = ""  # MariaDB COLUMN_TYPE (`tinyint(1) unsigned`), PostgreSQL data_type
    precision: int | None = None  # numeric precision; bit length for bit types
    scale: int | None = None
    datetime_precision: int | None = None
    kind: str = ""  # PostgreSQL pg_type.typtype: b base, e enum, ...; "array" for arrays

    @property
    def unsigned(self) -> bool:
        return "unsigned" in self.column_type


@dataclass(frozen=True)
class CatalogTable:
    """A source table: where it lives, its columns in order, its key and replica identity."""

    source: str
    dialect: str
    schema: str  # PostgreSQL schema, MariaDB database
    table: str
    columns: tuple[CatalogColumn, ...]
    key: tuple[str, ...]
    replica_identity: str | None = None  # PostgreSQL: default, full, index or nothing

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"


def captured(config: dict[str, str]) -> tuple[str, ...]:
    """The schemas (PostgreSQL) or databases (MariaDB) a connector's config includes."""
    included = config.get("schema.include.list") or config.get("database.include.list", "")
    return tuple(name.strip() for name in included.split(",") if name.strip())


@dataclass(frozen=True)
class ConnectorModes:
    """The connector settings that decide how a SQL type is emitted."""

    dialect: str
    topic_prefix: str
    decimal_handling: str = "precise"
    time_precision: str = "adaptive"
    interval_handling: str = "numeric"
    bigint_unsigned: str = "long"
    # None: no TINYINT(1) boolean converter; () every TINYINT(1); else `db.table.column` regexes.
    boolean_columns: tuple[str, ...] | None = None
    captured: tuple[str, ...] = ()  # schema.include.list / database.include.list

    @classmethod
    def of(cls, dialect: str, config: dict[str, str]) -> ConnectorModes:
        """The modes of one connector config (conf/cdc/*.connector.json, placeholders as is)."""
        converters = [name.strip() for name in config.get("converters", "").split(",")]
        booleans = None
        for name in converters:
            if name and config.get(f"{name}.type", "").endswith(BOOLEAN_CONVERTER):
                selector = config.get(f"{name}.selector", "")
                booleans = tuple(p.strip() for p in selector.split(",") if p.strip())
        return cls(
            dialect=dialect,
            topic_prefix=config["topic.prefix"],
            decimal_handling=config.get("decimal.handling.mode", "precise"),
            time_precision=config.get("time.precision.mode", DEFAULT_TIME_PRECISION[dialect]),
            interval_handling=config.get("interval.handling.mode", "numeric"),
            bigint_unsigned=config.get("bigint.unsigned.handling.mode", "long"),
            boolean_columns=booleans,
            captured=captured(config),
        )


Mapper = Callable[[CatalogColumn, ConnectorModes, str], str]


def _decimal(column: CatalogColumn, modes: ConnectorModes, _: str) -> str:
    """decimal(p,s) in precise mode; `numeric` (exact text) without a declared precision."""
    if modes.decimal_handling == "double":
        return "float64"
    if modes.decimal_handling == "string":
        return "string"
    if column.precision is None:
        return "numeric"
    return f"decimal({column.precision},{column.scale or 0})"


def _fraction_digits(column: CatalogColumn) -> int:
    return 6 if column.datetime_precision is None else column.datetime_precision


def _timestamp(column: CatalogColumn, modes: ConnectorModes, _: str) -> str:
    """Adaptive modes: milliseconds up to 3 fraction digits, else microseconds."""
    if modes.time_precision == "connect" or _fraction_digits(column) <= 3:
        return "timestamp_ms"
    return "timestamp_us"


def _time(column: CatalogColumn, modes: ConnectorModes, _: str) -> str:
    """MySQL's adaptive_time_microseconds (its default) always emits MicroTime."""
    if modes.time_precision == "adaptive_time_microseconds":
        return "time_us"
    if modes.time_precision == "connect" or _fraction_digits(column) <= 3:
        return "time_ms"
    return "time_us"


def _interval(_: CatalogColumn, modes: ConnectorModes, __: str) -> str:
    return "string" if modes.interval_handling == "string" else "int64"


def _bits(column: CatalogColumn, _: ConnectorModes, __: str) -> str:
    return "boolean" if column.precision == 1 else "bytes"


def _tinyint(column: CatalogColumn, modes: ConnectorModes, where: str) -> str:
    """TINYINT(1) is boolean when the connector's converter selects it, else int16."""
    selected = modes.boolean_columns
    if not column.column_type.startswith("tinyint(1)") or selected is None:
        return "int16"
    if not selected or any(re.fullmatch(p, where, re.IGNORECASE) for p in selected):
        return "boolean"
    return "int16"


def _unsigned(signed: str, wider: str) -> Mapper:
    return lambda column, _, __: wider if column.unsigned else signed


def _bigint(column: CatalogColumn, modes: ConnectorModes, _: str) -> str:
    if not column.unsigned or modes.bigint_unsigned == "long":
        return "int64"
    return "decimal(20,0)" if modes.bigint_unsigned == "precise" else "string"


def _float(column: CatalogColumn, _: ConnectorModes, __: str) -> str:
    """MySQL FLOAT is single precision; the deprecated FLOAT(M,D) is emitted as a double."""
    single = column.column_type in ("float", "float unsigned")
    return "float32" if single else "float64"


def _each(dialect: str, names: str, kind: str) -> dict[tuple[str, str], str]:
    return {(dialect, name): kind for name in names.split()}


# (dialect, base type) -> config type: a name, or a function of the column and the modes.
TYPE_MAP: dict[tuple[str, str], str | Mapper] = {
    **_each(POSTGRES, "text varchar bpchar char name citext json jsonb xml uuid", "string"),
    **_each(POSTGRES, "inet cidr macaddr macaddr8 timetz tsvector ltree hstore", "string"),
    (POSTGRES, "bool"): "boolean",
    (POSTGRES, "int2"): "int16",
    (POSTGRES, "int4"): "int32",
    (POSTGRES, "int8"): "int64",
    (POSTGRES, "oid"): "int64",
    (POSTGRES, "float4"): "float32",
    (POSTGRES, "float8"): "float64",
    (POSTGRES, "numeric"): _decimal,
    (POSTGRES, "date"): "date",
    (POSTGRES, "time"): _time,
    (POSTGRES, "timestamp"): _timestamp,
    (POSTGRES, "timestamptz"): "timestamp_tz",
    (POSTGRES, "interval"): _interval,
    (POSTGRES, "bytea"): "bytes",
    (POSTGRES, "bit"): _bits,
    (POSTGRES, "varbit"): "bytes",
    (POSTGRES, "point"): "point",
    (POSTGRES, "geometry"): "geometry",
    (POSTGRES, "geography"): "geometry",
    (POSTGRES, "enum"): "string",
    (POSTGRES, "array"): "string",
    **_each(MARIADB, "char varchar tinytext text mediumtext longtext json", "string"),
    **_each(MARIADB, "enum set uuid inet4 inet6", "string"),
    **_each(MARIADB, "binary varbinary tinyblob blob mediumblob longblob", "bytes"),
    # Debezium's binlog connectors send POINT as a Point (x, y and its WKB), the rest as WKB.
    (MARIADB, "point"): "point",
    **_each(MARIADB, "geometry linestring polygon multipoint multilinestring", "geometry"),
    **_each(MARIADB, "multipolygon geometrycollection", "geometry"),
    (MARIADB, "tinyint"): _tinyint,
    (MARIADB, "smallint"): _unsigned("int16", "int32"),
    (MARIADB, "mediumint"): "int32",
    (MARIADB, "int"): _unsigned("int32", "int64"),
    (MARIADB, "bigint"): _bigint,
    (MARIADB, "decimal"): _decimal,
    (MARIADB, "float"): _float,
    (MARIADB, "double"): "float64",
    (MARIADB, "bit"): _bits,
    (MARIADB, "year"): "int32",
    (MARIADB, "date"): "date",
    (MARIADB, "time"): _time,
    (MARIADB, "datetime"): _timestamp,
    (MARIADB, "timestamp"): "timestamp_tz",
}


def config_type(column: CatalogColumn, modes: ConnectorModes, table: str) -> str | None:
    """The config's type of `column` of `table` (`schema.table`); None when not mapped."""
    base = column.kind if column.kind in ("array", "enum") else column.base
    mapped = TYPE_MAP.get((modes.dialect, base.lower()))
    if mapped is None or isinstance(mapped, str):
        return mapped
    return mapped(column, modes, f"{table}.{column.name}")


_PG_COLUMNS = """
select c.column_name, c.udt_name, c.data_type, c.numeric_precision, c.numeric_scale,
       c.datetime_precision, c.character_maximum_length, t.typtype
from information_schema.columns c
join pg_catalog.pg_namespace n on n.nspname = c.udt_schema
join pg_catalog.pg_type t on t.typname = c.udt_name and t.typnamespace = n.oid
where c.table_schema = %s and c.table_name = %s
order by c.ordinal_position
"""
_PG_KEY = """
select a.attname
from pg_catalog.pg_index i
join pg_catalog.pg_class r on r.oid = i.indrelid
join pg_catalog.pg_namespace n on n.oid = r.relnamespace
join pg_catalog.pg_attribute a on a.attrelid = r.oid and a.attnum = any(i.indkey)
where n.nspname = %s and r.relname = %s and i.indisprimary
order by array_position(i.indkey::int2[], a.attnum)
"""
_PG_IDENTITY = """
select r.relreplident from pg_catalog.pg_class r
join pg_catalog.pg_namespace n on n.oid = r.relnamespace
where n.nspname = %s and r.relname = %s
"""
REPLICA_IDENTITIES = {"d": "default", "f": "full", "i": "index", "n": "nothing"}


def _pg_column(row: tuple[Any, ...]) -> CatalogColumn:
    name, udt, data_type, precision, scale, fraction, length, typtype = row
    bits = udt in ("bit", "varbit")
    kind = "array" if data_type == "ARRAY" else ("enum" if typtype == "e" else str(typtype))
    return CatalogColumn(
        name=name,
        base=udt,
        column_type=data_type,
        precision=length if bits else precision,
        scale=scale,
        datetime_precision=fraction,
        kind=kind,
    )


def read_postgres(conf: Settings, source: str, schema: str, table: str) -> CatalogTable:
    """The table's columns, primary key and replica identity from the chain's PostgreSQL."""
    with closing(databases.postgres(conf)) as connection, connection.cursor() as cursor:
        cursor.execute(_PG_COLUMNS, (schema, table))
        columns = tuple(_pg_column(row) for row in cursor.fetchall())
        cursor.execute(_PG_KEY, (schema, table))
        key = tuple(row[0] for row in cursor.fetchall())
        cursor.execute(_PG_IDENTITY, (schema, table))
        identity = cursor.fetchone()
        connection.rollback()
    found = REPLICA_IDENTITIES.get(str(identity[0])) if identity else None
    return _found(CatalogTable(source, POSTGRES, schema, table, columns, key, found))


_MARIADB_COLUMNS = """
select column_name, data_type, column_type, numeric_precision, numeric_scale,
       datetime_precision, character_maximum_length
from information_schema.columns
where table_schema = %s and table_name = %s
order by ordinal_position
"""
_MARIADB_KEY = """
select column_name from information_schema.key_column_usage
where table_schema = %s and table_name = %s and constraint_name = 'PRIMARY'
order by ordinal_position
"""


def _mariadb_column(row: tuple[Any, ...]) -> CatalogColumn:
    name, data_type, column_type, precision, scale, fraction, _length = row
    column_type = str(column_type).lower()
    bits = re.match(r"bit\((\d+)\)", column_type)
    return CatalogColumn(
        name=name,
        base=str(data_type).lower(),
        column_type=column_type,
        precision=int(bits[1]) if bits else precision,
        scale=scale,
        datetime_precision=fraction,
    )


def read_mariadb(conf: Settings, source: str, database: str, table: str) -> CatalogTable:
    """The table's columns and primary key from the chain's MariaDB."""
    with closing(databases.mariadb(conf, None)) as connection, connection.cursor() as cursor:
        cursor.execute(_MARIADB_COLUMNS, (database, table))
        columns = tuple(_mariadb_column(row) for row in cursor.fetchall())
        cursor.execute(_MARIADB_KEY, (database, table))
        key = tuple(row[0] for row in cursor.fetchall())
    return _found(CatalogTable(source, MARIADB, database, table, columns, key))


def _found(table: CatalogTable) -> CatalogTable:
    if not table.columns:
        raise UserError(
            f"{table.source}: no table {table.qualified} in the source database: create it "
            f"first (`lakehouse cdc sql {table.source}`) or check the name"
        )
    return table


# Every base table outside the databases' own catalogs, as `schema.table`
# (PostgreSQL) or `database.table` (MariaDB): what a connector's
# table.include.list is matched against.
_TABLES = """
select table_schema, table_name from information_schema.tables
where table_type = 'BASE TABLE'
  and table_schema not in ('pg_catalog', 'information_schema', 'mysql', 'performance_schema', 'sys')
order by table_schema, table_name
"""


def list_tables(conf: Settings, dialect: str) -> list[str]:
    """The source database's tables, qualified as Debezium's include lists name them."""
    connect = databases.postgres if dialect == POSTGRES else lambda c: databases.mariadb(c, None)
    with closing(connect(conf)) as connection, connection.cursor() as cursor:
        cursor.execute(_TABLES)
        names = [f"{schema}.{table}" for schema, table in cursor.fetchall()]
        if dialect == POSTGRES:
            connection.rollback()
    return names
