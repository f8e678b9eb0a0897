"""A user's own tables on the live chain: every column type the connectors map, exact.

One PostgreSQL and one MariaDB table hold the types of Debezium's data-type
mapping pages, filled with edge values and NULLs, then updated (a TOAST column
left unchanged, twice in one batch and once across batches), deleted from and
altered. They are added to a copy of the table config, ingested from Kafka,
and bronze is compared with the databases' own rows, value by value: each
expected value is read from the database (by its driver or by the database's
own SQL), never from the decoder.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from ingestion.config import TableConfig, load_tables
from ingestion.engine import ingest
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.plan import kafka_source
from ingestion.results import IngestRun
from ingestion.settings import PROJECT_DIR, settings
from lakehouse.cdc import databases, markers
from lakehouse.table_entry import add_table
from tests.cdc.live import Live
from tests.cdc.test_live_chain import quarantine_reasons
from tests.cdc.test_own_table_guide import project_copy

DATABASE = "it_own_bronze"
TABLE = "own_types"
PLACEHOLDER = "__debezium_unavailable_value"
BIG_TEXT = "".join(f"{i:05d}-toasted " for i in range(4_000))  # 48 KB, stored out of line
BIG_BYTES = bytes(range(256)) * 200  # 51 KB

PG_DDL = [
    "create type ems.own_mood as enum ('sad', 'ok', 'happy')",
    f"""create table ems.{TABLE} (
        id integer primary key,
        c_smallint smallint, c_integer integer, c_bigint bigint,
        c_real real, c_double double precision,
        c_numeric numeric(12, 4), c_numeric_wide numeric(40, 10), c_numeric_any numeric,
        c_money money, c_boolean boolean, c_bit bit(1), c_bits bit(12), c_varbit varbit(20),
        c_char char(5), c_varchar varchar(40), c_text text, c_bytea bytea,
        c_date date, c_time time, c_time3 time(3), c_timetz timetz,
        c_timestamp timestamp, c_timestamp3 timestamp(3), c_timestamptz timestamptz,
        c_interval interval, c_json json, c_jsonb jsonb, c_uuid uuid, c_xml xml,
        c_inet inet, c_cidr cidr, c_macaddr macaddr,
        c_int_array integer[], c_text_array text[], c_enum ems.own_mood, c_point point,
        c_big_text text, c_big_bytea bytea
    )""",
    f"alter table ems.{TABLE} alter column c_big_text set storage external",
    f"alter table ems.{TABLE} alter column c_big_bytea set storage external",
]
PG_COLUMNS = (
    "id, c_smallint, c_integer, c_bigint, c_real, c_double, c_numeric, c_numeric_wide, "
    "c_numeric_any, c_money, c_boolean, c_bit, c_bits, c_varbit, c_char, c_varchar, c_text, "
    "c_bytea, c_date, c_time, c_time3, c_timetz, c_timestamp, c_timestamp3, c_timestamptz, "
    "c_interval, c_json, c_jsonb, c_uuid, c_xml, c_inet, c_cidr, c_macaddr, c_int_array, "
    "c_text_array, c_enum, c_point, c_big_text, c_big_bytea"
)
PG_ROWS = [
    # the lowest values each type holds (and the ancient dates a sentinel uses)
    """1, -32768, -2147483648, -9223372036854775808, -1.25, -1.7976931348623157e308,
    -99999999.9999, '-123456789012345678901234567890.1234567890', '-0.000000000000000000001',
    '-92233720368547758.08', false, B'0', B'101010101010', B'1', 'a', '', '', '\\x00',
    '0001-01-01', '00:00:00', '00:00:00.001', '00:00:00+14', '0001-01-01 00:00:00',
    '1000-06-15 12:34:56.789', '0001-01-01 00:00:00+00',
    '-1 year -2 mons -3 days -04:05:06.789', '{"a": [1, 2.50, null]}', '{"b": {"c": "ü"}}',
    '00000000-0000-0000-0000-000000000000', '<a>1</a>', '::1', '10.0.0.0/8',
    '08:00:2b:01:02:03', '{1,-2,3}', '{"a","b c",NULL}', 'sad', point(-1.5, 2.25),
    'short', '\\x01'""",
    # the highest
    """2, 32767, 2147483647, 9223372036854775807, 3.4028235e38, 1.7976931348623157e308,
    99999999.9999, '999999999999999999999999999999.9999999999',
    '12345678901234567890.123456789012345678901234567890', '92233720368547758.07', true,
    B'1', B'111100001111', B'10110', 'abcde', 'ü€😀 utf-8', e'two\\nlines "q" \\\\ \\'s',
    '\\xdeadbeef', '9999-12-31', '23:59:59.999999', '23:59:59.999', '23:59:59.999999-12',
    '9999-12-31 23:59:59.999999', '1969-12-31 23:59:59.999', '9999-12-31 23:59:59.999999+00',
    '1 year 2 mons 3 days 04:05:06.789', '[]', '{}', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '<b/>', '192.168.0.1/24', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff', '{}', '{}', 'happy',
    point(1e10, -1e-10), 'short', '\\x02'""",
    # NULL in every column
    "3" + ", null" * 38,
    # ordinary values around the epoch, and the large values TOAST keeps out of line
    """4, 7, 8, 9, 0.5, 0.1, 1.5, '1.5', '1.50', '0.00', true, B'1', B'000000000001',
    B'', 'x', 'plain', 'plain', '\\x', '1969-12-31', '12:34:56.789012', '12:34:56.789',
    '12:34:56.789012+05:30', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00',
    '2024-02-29 12:00:00.5+02', '1 mon', 'null', '"text"', '12345678-1234-1234-1234-123456789abc',
    '<c>ü</c>', '10.1.2.3', '10.1.0.0/16', '00:00:00:00:00:00', '{0}', '{""}', 'ok',
    point(0, 0), %(big_text)s, %(big_bytes)s""",
]
MARIADB_DDL = [
    f"""create table ecomm.{TABLE} (
        id int primary key,
        c_tinyint tinyint, c_tinyint_u tinyint unsigned, c_tinyint1 tinyint(1),
        c_smallint smallint, c_smallint_u smallint unsigned,
        c_mediumint mediumint, c_mediumint_u mediumint unsigned,
        c_int int, c_int_u int unsigned, c_bigint bigint, c_bigint_u bigint unsigned,
        c_float float, c_double double, c_decimal decimal(12, 4), c_decimal_wide decimal(65, 30),
        c_bit bit(1), c_bits bit(12), c_year year,
        c_date date, c_time time(6), c_datetime datetime, c_datetime6 datetime(6),
        c_timestamp timestamp(6) null default null,
        c_char char(5), c_varchar varchar(40), c_text text, c_blob blob,
        c_binary binary(4), c_varbinary varbinary(10),
        c_enum enum('a', 'b', 'c'), c_set set('x', 'y', 'z'), c_json json,
        c_point point, c_geometry geometry
    ) default charset = utf8mb4""",
]
MARIADB_ROWS = [
    """1, -128, 0, -128, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
    -1.25, -1.7976931348623157e308, -99999999.9999,
    -99999999999999999999999999999999999.999999999999999999999999999999, b'0',
    b'101010101010', 1901, '0001-01-01', '-838:59:59', '1000-01-01 00:00:00',
    '0001-01-01 00:00:00.000000', '1970-01-01 00:00:01.000000', 'a', '', '', x'00', x'00',
    x'', 'a', '', '{"a": [1, 2.50, null]}', ST_GeomFromText('POINT(-1.5 2.25)'),
    ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)', 4326)""",
    """2, 127, 255, 2, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
    9223372036854775807, 18446744073709551615, 3.40282e38, 1.7976931348623157e308,
    99999999.9999, 99999999999999999999999999999999999.999999999999999999999999999999, b'1',
    b'111100001111', 2155, '9999-12-31', '838:59:59.999999', '9999-12-31 23:59:59',
    '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', 'abcde', 'ü€😀 utf-8',
    'two\\nlines "q" \\\\ \\'s', x'deadbeef', x'01020304', x'ffff', 'c', 'x,z', '[]',
    ST_GeomFromText('POINT(1e10 -1e-10)'), ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))')""",
    "3" + ", null" * 34,
    """4, 1, 1, 1, 7, 7, 7, 7, 8, 8, 9, 9223372036854775808, 0.5, 0.1, 1.5,
    0.000000000000000000000000000001, b'1', b'000000000001', 2024, '1969-12-31', '12:34:56',
    '1969-12-31 23:59:59', '1970-01-01 00:00:00.000001', '2024-02-29 12:00:00.500000', 'x',
    'plain', 'plain', x'', x'0a', x'0a', 'b', '', '{"k": "v"}', ST_GeomFromText('POINT(0 0)'),
    ST_GeomFromText('POINT(3 4)')""",
]


@dataclasses.dataclass
class Own:
    """The own tables, the runs that ingested them, and their bronze database."""

    tables: list[TableConfig]
    runs: list[IngestRun]
    tables_file: Path  # the project's conf/tables.yml plus the own tables' entries


def _postgres(statements: list[str], params: dict[str, Any] | None = None) -> None:
    with closing(databases.postgres(settings())) as connection:
        for statement in statements:
            connection.execute(statement, params if "%(" in statement else None)
        connection.commit()


def _mariadb(statements: list[str]) -> None:
    with closing(databases.mariadb(settings())) as connection, connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        connection.commit()


def _first_changes() -> None:
    """Inserts, two updates of one key leaving its TOAST columns unchanged, an insert deleted."""
    big = {"big_text": BIG_TEXT, "big_bytes": BIG_BYTES}
    _postgres(
        PG_DDL + [f"insert into ems.{TABLE} ({PG_COLUMNS}) values ({r})" for r in PG_ROWS], big
    )
    _postgres([
        f"update ems.{TABLE} set c_integer = 10 where id = 4",
        f"update ems.{TABLE} set c_integer = 11, c_varchar = 'twice' where id = 4",
        f"insert into ems.{TABLE} (id, c_text) values (5, 'gone')",
        f"delete from ems.{TABLE} where id = 5",
    ])  # fmt: skip
    _mariadb(MARIADB_DDL + [f"insert into ecomm.{TABLE} values ({r})" for r in MARIADB_ROWS])
    _mariadb([
        f"update ecomm.{TABLE} set c_int = 10 where id = 4",
        f"insert into ecomm.{TABLE} (id, c_text) values (5, 'gone')",
        f"delete from ecomm.{TABLE} where id = 5",
    ])  # fmt: skip


def _second_changes() -> None:
    """An update across batches (TOAST unchanged), a delete, an added column and its values."""
    _postgres([
        f"update ems.{TABLE} set c_varchar = 'across' where id = 4",
        f"delete from ems.{TABLE} where id = 2",
        f"alter table ems.{TABLE} add column c_added integer",
        f"update ems.{TABLE} set c_added = 1 where id = 1",
        f"insert into ems.{TABLE} (id, c_added, c_date) values (6, 7, '0001-01-01')",
    ])  # fmt: skip
    _mariadb([
        f"delete from ecomm.{TABLE} where id = 2",
        f"alter table ecomm.{TABLE} add column c_added int",
        f"update ecomm.{TABLE} set c_added = 1 where id = 1",
        f"insert into ecomm.{TABLE} (id, c_added, c_date) values (6, 7, '0001-01-01')",
    ])  # fmt: skip


def _own_tables(tmp: Path) -> list[TableConfig]:
    """The project's table config plus the two own tables, added by `lakehouse tables add`."""
    path = tmp / "tables.yml"
    path.write_text((PROJECT_DIR / "conf" / "tables.yml").read_text())
    for source in ("ems", "ecomm"):
        add_table(settings(), source, f"{source}.{TABLE}", name=f"{source}_{TABLE}", write_to=path)
    tables = load_tables(path, database=DATABASE)
    kinds = {"ems": "mor", "ecomm": "cow"}  # one of each table type
    return [
        dataclasses.replace(
            t,
            source=dataclasses.replace(t.source, kind="kafka"),
            table_type=kinds[t.source.name],
        )
        for name, t in tables.items()
        if name.endswith(TABLE)
    ]


def _publish_and_ingest(spark, own: Own) -> IngestRun:
    markers.wait_published(spark, settings(), markers.write_markers(settings()))
    run = ingest(spark, settings(), own.tables, log=lambda _: None)
    own.runs.append(run)
    return run


@pytest.fixture(scope="module")
def own(spark, live_chain: Live, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Own]:
    _first_changes()
    folder = tmp_path_factory.mktemp("own")
    own = Own(_own_tables(folder), [], folder / "tables.yml")
    _publish_and_ingest(spark, own)
    _second_changes()
    _publish_and_ingest(spark, own)
    yield own


def bronze(spark, table: TableConfig, name: str | None = None):
    path = to_hadoop_uri(table_path(settings(), DATABASE, name or table.name))
    return spark.read.format("hudi").load(path)


# ---------- canonical values: what a database value and a bronze value are compared as


def _float32(value: float | None) -> float | None:
    return None if value is None else struct.unpack("f", struct.pack("f", value))[0]


def _decimal(value: Any) -> tuple | None:
    """A decimal's digits and exponent: the value and the scale it was stored with."""
    return None if value is None else decimal.Decimal(str(value)).as_tuple()


def _bits(value: Any) -> int | None:
    """A bit string as its number: bronze holds bit(1) as a boolean, longer ones as
    Debezium's Bits (the bytes, least significant first)."""
    if value is None or isinstance(value, bool):
        return value if value is None else int(value)
    return int.from_bytes(bytes(value), "little")


def _bit_text(value: str | None) -> int | None:
    return None if value is None else int(value or "0", 2)


def _hex_srid(value: str | None) -> tuple | None:
    """`HEX:SRID` of a MariaDB geometry, read with ST_AsBinary and ST_SRID."""
    if value is None:
        return None
    wkb, srid = value.split(":")
    return bytes.fromhex(wkb), int(srid)


def _time_text(value: str | None) -> int | None:
    """`[-]H:MM:SS[.ffffff]` as microseconds (a MariaDB TIME goes beyond a day, and below 0)."""
    if value is None:
        return None
    match = re.fullmatch(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?Z?", value)
    assert match, f"not a time: {value!r}"
    sign, hours, minutes, seconds, fraction = match.groups()
    micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 10**6
    micros += int((fraction or "0").ljust(6, "0"))
    return -micros if sign else micros


def _time_of(value: datetime.time | datetime.timedelta | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        return (value.days * 86_400 + value.seconds) * 10**6 + value.microseconds
    if value.tzinfo is not None:
        moment = datetime.datetime.combine(datetime.date(2000, 1, 3), value)
        value = moment.astimezone(datetime.UTC).time()
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond


def _utc(value: datetime.datetime | None) -> datetime.datetime | None:
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(datetime.UTC).replace(tzinfo=None)


def _interval(value: str | None) -> tuple | None:
    """An ISO-8601 duration's parts, as PostgreSQL's iso_8601 style and Debezium both write it."""
    if value is None:
        return None
    pattern = (
        r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?"
    )
    match = re.fullmatch(pattern, value)
    assert match, f"not an ISO-8601 duration: {value!r}"
    *whole, seconds = match.groups()
    return (*(int(part or 0) for part in whole), decimal.Decimal(seconds or 0))


def _number(value: Any) -> decimal.Decimal | None:
    """A decimal's value alone, whatever its scale (a DecimalTuple or its text)."""
    if value is None:
        return None
    return decimal.Decimal(value if isinstance(value, tuple) else str(value)).normalize()


def _json(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def _point(value: Any) -> tuple | None:
    return None if value is None else (value["x"], value["y"])


def _wkb(value: Any) -> tuple | None:
    return None if value is None else (bytes(value["wkb"]), value["srid"] or 0)


def _set(value: Any) -> frozenset | None:
    if value is None:
        return None
    return frozenset(value if isinstance(value, set) else filter(None, str(value).split(",")))


def _tuple(value: list | None) -> tuple | None:
    return None if value is None else tuple(value)


def _same(value: Any) -> Any:
    return bytes(value) if isinstance(value, bytearray) else value


# Per column type: the SQL that reads a column from its database, how that value is
# compared, and how bronze's value is compared; `{c}` is the column. Other types
# compare as their drivers and Spark give them.
Canon = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]
PLAIN: Canon = ("{c}", _same, _same)
PG_CANON: dict[str, Canon] = {
    "real": ("{c}", _float32, _float32),
    "numeric": ("{c}::text", _decimal, _decimal),
    "money": ("{c}::numeric::text", _decimal, _decimal),
    "bit": ("{c}::text", _bit_text, _bits),
    "bit varying": ("{c}::text", _bit_text, _bits),
    "time without time zone": ("{c}", _time_of, _time_text),
    "time with time zone": ("{c}", _time_of, _time_text),
    "interval": ("{c}::text", _interval, _interval),  # intervalstyle iso_8601
    "ARRAY": ("array_to_json({c})::text", _json, _json),
    "point": ("case when {c} is not null then array[{c}[0], {c}[1]] end", _tuple, _point),
    # the type's own output function, as pgoutput sends it (inet's ::text adds a mask)
    **{kind: ("case when {c} is not null then format('%s', {c}) end", _same, _same) for kind in (
        "json", "jsonb", "uuid", "xml", "inet", "cidr", "macaddr", "USER-DEFINED"
    )},
}  # fmt: skip
GEOMETRY: Canon = ("concat(hex(ST_AsBinary({c})), ':', ST_SRID({c}))", _hex_srid, _wkb)
MARIADB_CANON: dict[str, Canon] = {
    "float": ("{c}", _float32, _float32),
    "decimal": ("cast({c} as char)", _decimal, _decimal),
    "bigint": ("cast({c} as char)", _decimal, _decimal),
    "bit": ("{c} + 0", _same, _bits),
    "time": ("{c}", _time_of, _time_text),
    "set": ("{c}", _set, _set),
    "point": GEOMETRY,
    "geometry": GEOMETRY,
}


@dataclasses.dataclass(frozen=True)
class SourceRows:
    """A table's rows as its database holds them: canonical values by key, and its types."""

    types: dict[str, str]
    rows: dict[int, dict[str, Any]]


def _read(cursor: Any, schema: str, canon: dict[str, Canon]) -> SourceRows:
    cursor.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = %s and table_name = %s order by ordinal_position",
        (schema, TABLE),
    )
    types = {str(name): str(kind) for name, kind in cursor.fetchall()}
    reads = {name: canon.get(kind, PLAIN) for name, kind in types.items()}
    cursor.execute(
        f"select {', '.join(r[0].format(c=n) for n, r in reads.items())} from {schema}.{TABLE}"
    )
    rows = {
        row[0]: {
            name: read[1](value) for (name, read), value in zip(reads.items(), row, strict=True)
        }
        for row in cursor.fetchall()
    }
    return SourceRows(types, rows)


def database_rows(source: str) -> SourceRows:
    """The own table's current rows, read by the database's driver and its own SQL."""
    conf = settings()
    if source == "ems":
        with closing(databases.postgres(conf)) as connection, connection.cursor() as cursor:
            cursor.execute("set intervalstyle = 'iso_8601'")
            return _read(cursor, "ems", PG_CANON)
    with closing(databases.mariadb(conf)) as connection, connection.cursor() as cursor:
        cursor.execute("set time_zone = '+00:00'")
        return _read(cursor, "ecomm", MARIADB_CANON)


def _stamp(value: datetime.datetime | None) -> str | None:
    """A timestamp as text: PySpark cannot collect one before 0001-01-02 (its local-time
    conversion steps a day back), so bronze's are compared as Spark formats them."""
    if value is None:
        return None
    day = f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    return f"{day} {value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"


def _bronze_rows(spark, table: TableConfig, columns: list[str]) -> dict[int, Any]:
    """Bronze's current rows by key, timestamps formatted as text (`_stamp`)."""
    frame = bronze(spark, table).where("not _cdc_is_deleted")
    kinds = {f.name: f.dataType.simpleString() for f in frame.schema}
    stamp = "date_format({c}, 'yyyy-MM-dd HH:mm:ss.SSSSSS') as {c}"
    selects = [(stamp if kinds[c] == "timestamp" else "{c}").format(c=c) for c in columns]
    return {row["id"]: row for row in frame.selectExpr(*selects).collect()}


# docs/contracts.md's exceptions: compared by value here, and by what Debezium itself
# sent in test_documented_exceptions_are_what_debezium_sends.
AS_DEBEZIUM_SENDS = {("ems", "c_numeric_any")}


def differences(spark, table: TableConfig, expected: SourceRows) -> list[str]:
    """Every (key, column) where bronze's current row differs from the database's."""
    canon = PG_CANON if table.source.name == "ems" else MARIADB_CANON
    got = _bronze_rows(spark, table, list(expected.types))
    found = [] if sorted(got) == sorted(expected.rows) else [f"keys: bronze {sorted(got)}"]
    for key in sorted(set(got) & set(expected.rows)):
        for column, kind in expected.types.items():
            want = expected.rows[key][column]
            if isinstance(want, datetime.datetime):
                want = _stamp(_utc(want))
            value = canon.get(kind, PLAIN)[2](got[key][column])
            if (table.source.name, column) in AS_DEBEZIUM_SENDS:
                want, value = _number(want), _number(value)
            if value != want:
                found.append(f"id {key} {column} ({kind}): {want!r:.80} != {value!r:.80}")
    return found


@pytest.mark.parametrize("source", ["ems", "ecomm"])
def test_own_table_lands_exact_in_bronze(spark, own: Own, source: str) -> None:
    """Every column of the database's rows, after every kind of change, equals bronze's."""
    assert [run.quarantined for run in own.runs] == [0, 0], quarantine_reasons(spark, DATABASE)
    table = next(t for t in own.tables if t.source.name == source)
    expected = database_rows(source)
    assert "c_added" in expected.types and set(expected.rows) == {1, 3, 4, 6}
    found = differences(spark, table, expected)
    assert not found, "\n".join(found)
    deleted = bronze(spark, table).where("_cdc_is_deleted").select("id").collect()
    assert sorted(row.id for row in deleted) == [2, 5]


def test_no_placeholder_in_bronze_or_the_changelog(spark, own: Own) -> None:
    """TOAST-unchanged columns: the stored value, never Debezium's placeholder, anywhere."""
    table = next(t for t in own.tables if t.source.name == "ems")
    for name in (table.name, table.changelog_name):
        frame = bronze(spark, table, name)
        texts = [f.name for f in frame.schema if f.dataType.simpleString() in ("string", "binary")]
        marked = " or ".join(f"instr(cast({c} as string), '{PLACEHOLDER}') > 0" for c in texts)
        assert frame.where(marked).count() == 0, name
    current = bronze(spark, table).where("id = 4").select("c_big_text", "c_big_bytea").first()
    assert (current.c_big_text, bytes(current.c_big_bytea)) == (BIG_TEXT, BIG_BYTES)


def debezium_after(spark, table: TableConfig, key: int) -> dict[str, Any]:
    """The `after` of the last event Debezium published for a key: the connector's own
    output, as the table's Kafka source reads it (JSON, whether the topic is JSON or Avro)."""
    source = kafka_source(spark, settings(), table.topic, table.source)
    lines = source.read(source.pending({})).orderBy("line").collect()
    events = [json.loads(line.raw) for line in lines if line.raw != "null"]
    afters = [e.get("payload", e)["after"] for e in events if e.get("payload", e).get("after")]
    return [after for after in afters if after["id"] == key][-1]


def test_documented_exceptions_are_what_debezium_sends(spark, own: Own) -> None:
    """PostgreSQL's unbounded numeric: its value is exact, its scale the one Debezium sends.

    The database holds `1.50`; Debezium's VariableScaleDecimal for it carries
    scale 1 (`1.5`, trailing zeros dropped), and bronze keeps exactly what was sent.
    """
    table = next(t for t in own.tables if t.source.name == "ems")
    sent = debezium_after(spark, table, 4)["c_numeric_any"]
    unscaled = int.from_bytes(base64.b64decode(sent["value"]), "big", signed=True)
    debezium = decimal.Decimal(unscaled).scaleb(-sent["scale"])
    stored = bronze(spark, table).where("id = 4").first()["c_numeric_any"]
    assert database_rows("ems").rows[4]["c_numeric_any"] == decimal.Decimal("1.50").as_tuple()
    assert decimal.Decimal(stored) == decimal.Decimal("1.50")
    assert (sent["scale"], stored) == (1, str(debezium)) == (1, "1.5")


STAGING = """\
with

source as (

    select * from {{ source('tickit', 'ems_own_types') }}

),

renamed as (

    select
        id as own_type_id,
        c_numeric as amount,
        c_big_text as long_note,
        c_timestamp as recorded_at,
        c_added as added_value

    from source
    where not _cdc_is_deleted

)

select * from renamed
"""


def test_dbt_builds_a_staging_model_over_the_own_source(spark, own: Own, tmp_path: Path) -> None:
    """`dbt-sources`, then `dbt build` of a staging model over the new source: exact values."""
    root = project_copy(tmp_path / "project")
    shutil.copy(own.tables_file, root / "conf" / "tables.yml")
    (root / "models" / "staging" / "tickit" / "stg_tickit__ems_own_types.sql").write_text(STAGING)
    env = {
        **os.environ,
        "LAKEHOUSE_PROJECT_DIR": str(root),
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        "LAKEHOUSE_DBT_SCHEMA": "it_own",
        "LAKEHOUSE_DBT_TARGET_PATH": str(root / "target"),
    }
    select = "source:tickit.ems_own_types stg_tickit__ems_own_types"
    for command in ("dbt-sources", f"dbt -- build --select {select}"):
        ran = subprocess.run(
            [sys.executable, "-m", "lakehouse.cli", *command.split()],
            cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, (command, ran.stdout[-2000:], ran.stderr[-2000:])
    staged = spark.sql(
        "select own_type_id, amount, long_note, added_value "
        "from it_own_staging.stg_tickit__ems_own_types order by 1"
    ).collect()
    assert [(r[0], r[1], r[3]) for r in staged] == [
        (1, decimal.Decimal("-99999999.9999"), 1), (3, None, None),
        (4, decimal.Decimal("1.5000"), None), (6, None, 7),
    ]  # fmt: skip
    assert [r.long_note for r in staged] == ["short", None, BIG_TEXT, None]
