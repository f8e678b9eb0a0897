"""`lakehouse reconcile`: bronze's current rows against the source database's own, key by key.

For each served table of the chain's PostgreSQL (`ems`) and MariaDB
(`ecomm`), the data-diff way, so that a large table is not copied: both
sides hash every row's canonical values in their own SQL and sum the hashes
per bucket of keys (the bucket from a hash of the key); only the buckets
whose count or sum differ are read, on both sides, as keys and canonical
values, to name each differing key and its first differing column. A value's
canonical form is chosen by its source type, so that PostgreSQL, MariaDB and
Spark write it alike (integers and decimals as text, dates ISO, timestamps as
microseconds since the epoch, booleans as 0/1); a column of a type with no
such form (floats, JSON, arrays, binary, intervals) is named as not
compared. A table with changes not yet in bronze (its backlog, from `lakehouse
status`) is checked too, its differences said to be possibly in flight.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg
import pymysql
from pyspark.sql import DataFrame, SparkSession

from ingestion.config import TableConfig, load_document, select_tables
from ingestion.discovery import served_tables
from ingestion.paths import RECONCILED, TablePaths, table_path, to_hadoop_uri
from ingestion.results import ingestion_time
from ingestion.settings import Settings
from ingestion.sources import kafka_client
from lakehouse.cdc import databases
from lakehouse.status import table_status

BUCKETS = 256
SHOWN_KEYS = 20  # differing keys printed per table (all are in the results file)
NULL = "\u2400"  # the canonical form of a null: a character no key or value holds
SEP = 31  # the unit separator, between a row's canonical values
INTEGERS = {"smallint", "integer", "int", "bigint", "tinyint", "mediumint", "year"}
DECIMALS = {"numeric", "decimal"}
TEXTS = {"character varying", "varchar", "text", "character", "char", "bpchar", "uuid",
         "enum", "tinytext", "mediumtext", "longtext"}  # fmt: skip
TIMESTAMPS = {"timestamp without time zone", "timestamp with time zone", "datetime", "timestamp"}


@dataclass(frozen=True)
class Column:
    """A source column compared: its name and its source type (lowercase)."""

    name: str
    kind: str


@dataclass(frozen=True)
class Difference:
    """A key whose rows differ: missing in bronze, only in bronze, or a column's value."""

    key: str
    what: str  # "not in bronze" | "only in bronze" | "<column>: source <v>, bronze <v>"


@dataclass(frozen=True)
class TableReconcile:
    """One table's comparison."""

    table: str
    source_table: str
    source_rows: int = 0
    bronze_rows: int = 0
    differences: tuple[Difference, ...] = ()
    not_compared: tuple[str, ...] = ()  # columns without a canonical form, with their type
    note: str = ""  # not compared at all, or differences possibly in flight

    @property
    def equal(self) -> bool:
        return not self.differences and not self.note.startswith("not compared")


@dataclass(frozen=True)
class Reconcile:
    """Every table's comparison; the run's record."""

    checked_at: str
    seconds: float
    tables: tuple[TableReconcile, ...] = field(default=())

    @property
    def differing(self) -> list[str]:
        return [t.table for t in self.tables if t.differences]

    def to_json(self) -> str:
        """The run record: its status as the runs panel shows it, then every table's result."""
        status = "different" if self.differing else "equal"
        return json.dumps({"status": status, **asdict(self)}, indent=2)


# Per canonical form, each engine's SQL for a value `x`.
CANONICAL = {
    "text": {"postgresql": "{x}::text", "mysql": "cast({x} as char)",
             "spark": "cast({x} as string)"},
    "padded": {"postgresql": "rtrim({x}::text)", "mysql": "rtrim(cast({x} as char))",
               "spark": "rtrim(cast({x} as string))"},
    "date": {"postgresql": "to_char({x}, 'YYYY-MM-DD')", "mysql": "date_format({x}, '%Y-%m-%d')",
             "spark": "date_format({x}, 'yyyy-MM-dd')"},
    "timestamp": {"postgresql": "((extract(epoch from {x}) * 1000000)::bigint)::text",
                  "mysql": "cast(timestampdiff(microsecond, '1970-01-01', {x}) as char)",
                  "spark": "cast(unix_micros({x}) as string)"},
    "boolean": {"postgresql": "({x}::int)::text", "mysql": "cast({x} as char)",
                "spark": "cast(cast({x} as int) as string)"},
}  # fmt: skip


@dataclass(frozen=True)
class Dialect:
    """How one engine writes the comparison's SQL: quoting, canonical values, hashes."""

    name: str  # postgresql | mysql | spark
    quote: str  # the identifier quote

    def column(self, name: str) -> str:
        return f"{self.quote}{name}{self.quote}"

    def canonical(self, column: Column, bronze_boolean: bool = False) -> str:
        """The column's value as text all three engines write alike (NULL's marker for null).

        The form follows the source type; on Spark's side a bronze boolean
        (MariaDB's TINYINT(1) declared boolean) is written as the 0/1 its source holds.
        """
        if column.kind in TIMESTAMPS:
            form = "timestamp"
        elif column.kind == "boolean" or (self.name == "spark" and bronze_boolean):
            form = "boolean"
        elif column.kind in ("character", "char", "bpchar"):
            form = "padded"
        else:
            form = "date" if column.kind == "date" else "text"
        text = CANONICAL[form][self.name].format(x=self.column(column.name))
        return f"coalesce({text}, '{NULL}')"

    def joined(self, expressions: Sequence[str]) -> str:
        sep = f"char({SEP} using utf8mb4)" if self.name == "mysql" else f"chr({SEP})"
        return f"concat_ws({sep}, {', '.join(expressions)})"

    def hex_number(self, text: str, digits: int) -> str:
        """The first `digits` hex digits of md5(text) as a non-negative integer."""
        if self.name == "postgresql":
            return f"('x' || substr(md5({text}), 1, {digits}))::bit({digits * 4})::bigint"
        kind = "unsigned" if self.name == "mysql" else "decimal(20,0)"
        return f"cast(conv(substr(md5({text}), 1, {digits}), 16, 10) as {kind})"

    def hashed(self, table: str, canonical: Sequence[str], keys: int) -> str:
        """Per row: its key bucket `b`, key text `k`, row hash `h` and canonical values c0..

        The first `keys` values are the record key's.
        """
        values = ", ".join(f"{c} as c{i}" for i, c in enumerate(canonical))
        names = [f"c{i}" for i in range(len(canonical))]
        k = self.joined(names[:keys])
        return (
            f"select {self.hex_number(k, 7)} % {BUCKETS} as b, {k} as k, "
            f"{self.hex_number(self.joined(names), 15)} as h, {', '.join(names)} "
            f"from (select {values} from {table}) i"
        )


POSTGRESQL = Dialect("postgresql", '"')
MARIADB = Dialect("mysql", "`")
SPARK = Dialect("spark", "`")
DIALECTS = {"postgresql": POSTGRESQL, "mysql": MARIADB}  # by the source's connector


def bucket_sql(hashed: str) -> str:
    return f"select b, count(*), sum(h) from ({hashed}) m group by b"


def rows_sql(hashed: str, buckets: Sequence[int], count: int) -> str:
    values = ", ".join(f"c{i}" for i in range(count))
    return f"select k, {values} from ({hashed}) m where b in ({', '.join(map(str, buckets))})"


class NotCompared(Exception):
    """A table that cannot be compared, and why."""


@dataclass(frozen=True)
class SourceTable:
    """A table in its source database: where it is and how to ask it."""

    dialect: Dialect
    schema: str
    name: str
    url: str = ""  # the source's database URL; empty for the live chain's databases

    @property
    def qualified(self) -> str:
        return f"{self.dialect.column(self.schema)}.{self.dialect.column(self.name)}"


def source_of(table: TableConfig) -> SourceTable:
    """Where a table's rows are (`<prefix>.<schema>.<table>`): the database at its source's
    `database_url_env`, else the live chain's for its `ems` and `ecomm` sources."""
    source, parts = table.source, table.topic.split(".")
    if len(parts) < 3:
        raise NotCompared(f"its topic {table.topic} does not name a schema and a table")
    if env := source.database_url_env:
        if not (url := os.environ.get(env, "")):
            raise NotCompared(f"set {env} to the URL of source {source.name}'s database")
        if (dialect := DIALECTS.get(source.connector)) is None:
            raise NotCompared(f"a {source.connector} database is not read (PostgreSQL, MySQL)")
        return SourceTable(dialect, parts[-2], parts[-1], url)
    if (chain := {"ems": POSTGRESQL, "ecomm": MARIADB}.get(source.name)) is None:
        raise NotCompared(f"give source {source.name} a database_url_env in conf/tables.yml")
    return SourceTable(chain, parts[-2], parts[-1])


def connect(conf: Settings, source: SourceTable) -> Any:
    """A connection to the source database; MariaDB's session in UTC (see CANONICAL)."""
    if source.dialect is POSTGRESQL:
        return (
            psycopg.connect(source.url, connect_timeout=5)
            if source.url
            else databases.postgres(conf)
        )
    if source.url:
        url = urlsplit(source.url)
        connection = pymysql.connect(
            host=url.hostname, port=url.port or 3306, user=unquote(url.username or ""),
            password=unquote(url.password or ""), database=url.path.lstrip("/") or None,
            connect_timeout=5,
        )  # fmt: skip
    else:
        connection = databases.mariadb(conf, None)
    with connection.cursor() as cursor:
        cursor.execute("set time_zone = '+00:00'")
    return connection


def _query(connection: Any, sql: str, args: tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, args or None)
        return list(cursor.fetchall())


def write_record(conf: Settings, result: Reconcile) -> Path:
    """The run's results, differing keys and all, beside the other run records."""
    path = conf.home / "runs" / f"reconcile-{datetime.now(UTC):%Y%m%dT%H%M%S%f}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.to_json())
    return path


# The `_reconcile` table's columns: one row per table per check (checked_at made a timestamp).
RESULTS_SCHEMA = (
    "checked_at string, table_name string, source_table string, equal boolean, "
    "source_rows bigint, bronze_rows bigint, differences bigint, first_differences string, "
    "not_compared string, note string"
)


def write_table(spark: SparkSession, conf: Settings, result: Reconcile) -> str:
    """Append the check's per-table lines to `<bronze_database>._reconcile`; its name.

    A table of its own beside `_quarantine`, so the Pipeline page and any SQL
    client read the history of checks through the Thrift server.
    """
    rows = [
        (result.checked_at, t.table, t.source_table, t.equal,
         t.source_rows, t.bronze_rows, len(t.differences),
         "; ".join(f"{d.key}: {d.what}" for d in t.differences[:SHOWN_KEYS]),
         ", ".join(t.not_compared), t.note)
        for t in result.tables
    ]  # fmt: skip
    name = f"{conf.bronze_database}.{RECONCILED}"
    spark.sql(f"create database if not exists {conf.bronze_database}")
    path = to_hadoop_uri(table_path(conf, conf.bronze_database, RECONCILED))
    frame = spark.createDataFrame(rows, RESULTS_SCHEMA).coalesce(1)
    frame = frame.withColumn("checked_at", frame["checked_at"].cast("timestamp"))  # UTC session
    frame.write.mode("append").format("parquet").option("path", path).saveAsTable(name)
    return name


def source_columns(connection: Any, source: SourceTable) -> list[Column]:
    """The source table's columns and their types, from its own catalog."""
    rows = _query(
        connection,
        "select column_name, data_type from information_schema.columns "
        "where table_schema = %s and table_name = %s order by ordinal_position",
        (source.schema, source.name),
    )
    return [Column(str(name), str(kind).lower()) for name, kind in rows]


def comparable(
    columns: list[Column], bronze: set[str], key: Sequence[str]
) -> tuple[list[Column], list[str]]:
    """The columns both sides hold with a canonical form, keys first; the others, named."""
    known = INTEGERS | DECIMALS | TEXTS | TIMESTAMPS | {"date", "boolean"}
    kept, left = [], []
    for column in columns:
        if column.name.lower() not in bronze:
            left.append(f"{column.name} (not in bronze)")
        elif column.kind not in known:
            left.append(f"{column.name} ({column.kind})")
        else:
            kept.append(column)
    keys = [c for name in key for c in kept if c.name.lower() == name.lower()]
    return keys + [c for c in kept if c not in keys], left


def _buckets(rows: Sequence[Sequence[Any]]) -> dict[int, tuple[int, int]]:
    return {int(b): (int(n), int(h or 0)) for b, n, h in rows}


def keyed_differences(
    source: Sequence[Sequence[Any]], bronze: Sequence[Sequence[Any]], columns: list[Column],
    keys: int,
) -> list[Difference]:  # fmt: skip
    """Per key of the differing buckets: missing, extra, or its first differing column."""
    ours = {row[0]: tuple(row[1:]) for row in bronze}
    theirs = {row[0]: tuple(row[1:]) for row in source}
    names = [c.name for c in columns]
    found = []
    for key in sorted(theirs.keys() | ours.keys()):
        shown = ", ".join(
            f"{n}={v}" for n, v in zip(names[:keys], key.split(chr(SEP)), strict=True)
        )
        if key not in ours:
            found.append(Difference(shown, "not in bronze"))
        elif key not in theirs:
            found.append(Difference(shown, "only in bronze"))
        elif ours[key] != theirs[key]:
            i = next(
                i for i, (a, b) in enumerate(zip(theirs[key], ours[key], strict=True)) if a != b
            )
            found.append(
                Difference(shown, f"{names[i]}: source {theirs[key][i]}, bronze {ours[key][i]}")
            )
    return found


@dataclass(frozen=True)
class Compared:
    """The hashed-row queries of one table on both sides, ready to run."""

    columns: list[Column]
    keys: int
    source_sql: str
    bronze_sql: str


def _compared(
    table: TableConfig, source: SourceTable, kept: list[Column], bronze: DataFrame, view: str
) -> Compared:
    """The same query in both dialects; Spark's reads bronze's own column names and types."""
    fields = {f.name.lower(): f for f in bronze.schema.fields}
    ours = []
    for column in kept:
        field = fields[column.name.lower()]
        boolean = field.dataType.typeName() == "boolean"
        ours.append(SPARK.canonical(Column(field.name, column.kind), boolean))
    bronze.createOrReplaceTempView(view)
    keys = len(table.key)
    theirs = [source.dialect.canonical(c) for c in kept]
    return Compared(
        kept,
        keys,
        source.dialect.hashed(source.qualified, theirs, keys),
        SPARK.hashed(view, ours, keys),
    )


def _run(
    spark: SparkSession, connection: Any, compared: Compared
) -> tuple[int, int, list[Difference]]:
    """Counts per bucket on both sides, then the rows of the buckets that differ."""
    theirs = _buckets(_query(connection, bucket_sql(compared.source_sql)))
    ours = _buckets([tuple(r) for r in spark.sql(bucket_sql(compared.bronze_sql)).collect()])
    rows = (sum(n for n, _ in theirs.values()), sum(n for n, _ in ours.values()))
    differing = sorted(b for b in theirs.keys() | ours.keys() if theirs.get(b) != ours.get(b))
    if not differing:
        return *rows, []
    count = len(compared.columns)
    source = _query(connection, rows_sql(compared.source_sql, differing, count))
    bronze = [
        tuple(r) for r in spark.sql(rows_sql(compared.bronze_sql, differing, count)).collect()
    ]
    return *rows, keyed_differences(source, bronze, compared.columns, compared.keys)


def _bronze(spark: SparkSession, conf: Settings, table: TableConfig) -> DataFrame:
    try:
        return spark.read.format("hudi").load(to_hadoop_uri(TablePaths.of(conf, table).bronze))
    except Exception as error:  # no table, or no completed commit
        raise NotCompared("no bronze table yet") from error


def _open(conf: Settings, source: SourceTable) -> Any:
    try:
        return connect(conf, source)
    except (psycopg.Error, pymysql.Error) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise NotCompared(f"cannot reach its database: {first}") from error


def _compare(
    spark: SparkSession, table: TableConfig, source: SourceTable, bronze: DataFrame, connection: Any
) -> TableReconcile:
    where = f"{source.schema}.{source.name}"
    columns = source_columns(connection, source)
    kept, left = comparable(columns, {f.name.lower() for f in bronze.schema.fields}, table.key)
    if len(kept) < len(table.key):
        raise NotCompared(f"{where} or its key {', '.join(table.key)} is not at the source")
    live = bronze.where("not _cdc_is_deleted")
    compared = _compared(table, source, kept, live, f"reconcile_{table.name}")
    source_rows, bronze_rows, differences = _run(spark, connection, compared)
    return TableReconcile(
        table.name, where, source_rows, bronze_rows, tuple(differences), tuple(left)
    )


def reconcile_table(spark: SparkSession, conf: Settings, table: TableConfig) -> TableReconcile:
    """One table against its source database; a note says why one is not compared."""
    where = ""
    try:
        source = source_of(table)
        where = f"{source.schema}.{source.name}"
        bronze = _bronze(spark, conf, table)
        with closing(_open(conf, source)) as connection:
            return _compare(spark, table, source, bronze, connection)
    except NotCompared as why:
        return TableReconcile(table.name, where, note=f"not compared: {why}")


def _in_flight(conf: Settings, table: TableConfig, result: TableReconcile) -> TableReconcile:
    """Differences of a table with a backlog may be changes on their way: say so."""
    reader = kafka_client.TopicReader(conf.kafka_servers, conf.kafka_options)
    try:
        status = table_status(conf, table, reader, time.time())
    finally:
        reader.close()
    if not result.differences or not status.backlog:
        return result
    note = f"{status.backlog:,} {status.backlog_unit} not yet applied: differences may be in flight"
    return replace(result, note=note)


def reconcile(
    spark: SparkSession, conf: Settings, names: list[str] | None, log: Callable[[str], None]
) -> Reconcile:
    """Every selected served table against its source; each one's line as it is done."""
    started, checked_at = time.monotonic(), ingestion_time()
    served = served_tables(conf, load_document(database=conf.bronze_database)).tables
    results = []
    for table in select_tables(served, names):
        result = _in_flight(conf, table, reconcile_table(spark, conf, table))
        results.append(result)
        log(result_line(result))
    return Reconcile(checked_at, round(time.monotonic() - started, 1), tuple(results))


def result_line(result: TableReconcile) -> str:
    """`sales (ems.sales): 1,725 rows, equal`, or its differing keys, the first SHOWN_KEYS."""
    head = f"{result.table} ({result.source_table or 'no source'})"
    if result.note.startswith("not compared"):
        return f"{head}: {result.note}"
    rows = f"{result.source_rows:,} rows at the source, {result.bronze_rows:,} in bronze"
    left = f"; not compared: {', '.join(result.not_compared)}" if result.not_compared else ""
    if not result.differences:
        return f"{head}: {rows}, equal{left}"
    shown = "; ".join(f"{d.key}: {d.what}" for d in result.differences[:SHOWN_KEYS])
    more = len(result.differences) - SHOWN_KEYS
    tail = f"; and {more:,} more" if more > 0 else ""
    note = f" ({result.note})" if result.note else ""
    return f"{head}: {rows}, {len(result.differences):,} key(s) differ{note}: {shown}{tail}{left}"


def summary_line(result: Reconcile, record: Path) -> str:
    """The run's last line: the tables that differ, or how many are equal."""
    took = f"in {result.seconds:.0f} s (results {record})"
    if differing := result.differing:
        return f"reconcile: {len(differing)} table(s) differ from their source: " + (
            f"{', '.join(differing)} {took}"
        )
    equal = sum(1 for t in result.tables if t.equal)
    left = len(result.tables) - equal
    return f"reconcile: {equal} table(s) equal to their source, {left} not compared {took}"
