"""Every type the PostgreSQL, MySQL and SQL Server connectors emit, decoded exactly.

The corpus (tests/fixtures/debezium/<connector>/) holds one event per type,
encoded as each connector's type-mapping documentation says, with schemas,
schemaless and as Avro. The expected values below are worked out by hand from
that documentation, never read back from the decoder.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.decode.events import Decoded, DecodeSpec, classify, decode, read_lines
from ingestion.decode.logical_types import decode_value
from ingestion.decode.single_file import decode_paths
from ingestion.decode.types import from_connect

CORPUS = Path(__file__).parents[1] / "fixtures" / "debezium"
WKB_POINT_1_2 = bytes.fromhex("0101000000000000000000f03f0000000000000040")
TS = "yyyy-MM-dd HH:mm:ss.SSSSSS"

# column -> (Spark type, value); the event with id N sets the N-th column only.
POSTGRESQL = {
    "smallint": ("int", 32767),
    "integer": ("int", -2147483648),
    "bigint": ("bigint", 9223372036854775807),
    "real": ("float", 1.5),
    "double": ("double", 2.25),
    "boolean": ("boolean", True),
    "varchar": ("string", "h\u00e9llo"),
    "numeric_20_10": ("decimal(20,10)", Decimal("1.1234567890")),
    "numeric_38_10": ("decimal(38,10)", Decimal("1234567890123456789012345678.9012345678")),
    "numeric_38_20": ("decimal(38,20)", Decimal("-123456789012345678.90123456789012345678")),
    "numeric_50_5": ("string", "123456789012345678901234567890123456789012345.67890"),
    "numeric": ("string", "12.34"),  # VariableScaleDecimal {scale 2, 0x04d2 = 1234}
    "numeric_numeric_format": ("decimal(20,10)", Decimal("1.1234567890")),
    "numeric_double_mode": ("double", 3.14),
    "numeric_string_mode": ("string", "3.14"),
    "date": ("date", "2022-01-08"),  # 19000 days after 1970-01-01
    "time": ("string", "12:34:56.123456"),  # 45296123456 us
    "timestamp": ("timestamp", "2023-11-14 22:13:20.123456"),
    "timestamptz": ("timestamp", "2023-11-14 22:13:20.123456"),
    "timetz": ("string", "12:34:56.123456Z"),
    "interval": ("bigint", 90061000000),  # 1 day 1 h 1 min 1 s in microseconds
    "interval_string": ("string", "P1Y2M3DT4H5M6.78S"),
    "json": ("string", '{"a": [1, 2]}'),
    "uuid": ("string", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    "enum": ("string", "happy"),
    "bit_3": ("binary", b"\x05"),
    "xml": ("string", "<a>1</a>"),
    "geometry": ("struct<wkb:binary,srid:int>", (WKB_POINT_1_2, 4326)),
    "point": ("struct<x:double,y:double,wkb:binary,srid:int>", (1.0, 2.0, WKB_POINT_1_2, None)),
    "int_array": ("string", "[1,2,3]"),
}
MYSQL = {
    "tinyint": ("int", -128),
    "int_unsigned": ("bigint", 4294967295),
    "bigint_unsigned_precise": ("decimal(20,0)", Decimal("18446744073709551615")),
    "bigint_unsigned_long": ("bigint", -1),  # long mode: Debezium wraps past 2**63 - 1
    "decimal_10_2": ("decimal(10,2)", Decimal("12345678.90")),
    "decimal_65_30": ("string", "-" + "9" * 35 + "." + "9" * 30),
    "date": ("date", "2021-01-01"),
    "time": ("string", "-838:59:59.000000"),  # MySQL TIME's lower bound
    "datetime_6": ("timestamp", "2021-01-01 00:00:00.999999"),
    "datetime_3": ("timestamp", "2021-01-01 00:00:00.123000"),
    "timestamp": ("timestamp", "2021-01-01 00:00:00.500000"),
    "year": ("int", 2024),
    "enum": ("string", "red"),
    "set": ("string", "a,b"),
    "bit_10": ("binary", b"\x01\x02"),
    "json": ("string", '{"k":"v"}'),
    "geometry": ("struct<wkb:binary,srid:int>", (WKB_POINT_1_2, 0)),
    "blob": ("binary", b"\x01\x02\x03"),
}
SQLSERVER = {
    "tinyint": ("int", 255),
    "bit": ("boolean", False),
    "money": ("decimal(19,4)", Decimal("922337203685477.5807")),
    "smallmoney": ("decimal(10,4)", Decimal("-214748.3648")),
    "decimal_38_0": ("decimal(38,0)", Decimal("-" + "9" * 38)),
    "date": ("date", "1969-12-31"),
    "time_7": ("string", "12:34:56.123456789"),
    "time_3": ("string", "12:34:56.123000"),
    "datetime2_7": ("timestamp", "2023-11-14 22:13:20.123456"),  # ns beyond Spark's us
    "datetime2_4": ("timestamp", "2023-11-14 22:13:20.123400"),
    "datetime": ("timestamp", "2023-11-14 22:13:20.123000"),
    "datetimeoffset": ("timestamp", "2023-11-14 22:13:20.123456"),  # +01:00 -> UTC
    "uniqueidentifier": ("string", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
    "varbinary": ("binary", bytes.fromhex("deadbeef")),
    "geometry": ("struct<wkb:binary,srid:int>", (WKB_POINT_1_2, 4326)),
}
EXPECTED = {"postgresql": POSTGRESQL, "mysql": MYSQL, "sqlserver": SQLSERVER}


def decode_corpus(spark, json_files: list[Path], avro_files: list[Path]) -> Decoded:
    lines = read_lines(spark, [str(p) for p in json_files], [str(p) for p in avro_files])
    return decode(classify(lines), DecodeSpec("any", ()), ingested_at="2024-01-01")


def comparable(frame):
    """Timestamps as text (exact to the microsecond, no local-time conversion)."""
    return frame.select(*[
        F.date_format(f.name, TS).alias(f.name) if isinstance(f.dataType, T.TimestampType)
        else F.col(f.name).cast("string").alias(f.name) if isinstance(f.dataType, T.DateType)
        else F.col(f.name)
        for f in frame.schema.fields
    ])  # fmt: skip


def plain(value):
    return tuple(value) if isinstance(value, T.Row) else value


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def connector_rows(request, spark):
    """One connector's JSON-with-schema and Avro events: Spark types and rows by (file, id)."""
    folder = CORPUS / request.param
    decoded = decode_corpus(spark, [folder / "with_schema.json"], [folder / "events.avro"])
    assert decoded.rejects.count() == 0
    types = {f.name: f.dataType.simpleString() for f in decoded.events.schema.fields}
    rows = {
        (Path(r["_cdc_source_file"]).suffix, r["id"]): r.asDict()
        for r in comparable(decoded.events).collect()
    }
    return request.param, types, rows


def test_every_type_decodes_to_its_value_and_spark_type(connector_rows) -> None:
    connector, types, rows = connector_rows
    expected = EXPECTED[connector]
    assert len(rows) == 2 * len(expected)
    for number, (column, (spark_type, value)) in enumerate(expected.items(), start=1):
        assert types[column] == spark_type, (connector, column)
        for suffix in (".json", ".avro"):
            row = rows[(suffix, number)]
            assert plain(row[column]) == value, (connector, suffix, column)
            others = [c for c in expected if c != column and row[c] is not None]
            assert others == [], (connector, suffix, column)


def test_schemaless_events_keep_every_value_in_cdc_decode(spark) -> None:
    files = [str(CORPUS / c / "schemaless.json") for c in sorted(EXPECTED)]
    rows = [json.loads(line, parse_float=Decimal) for line in decode_paths(spark, files)]
    assert not [r for r in rows if "_rejected" in r]
    by_source = {(Path(r["_cdc_source_file"]).parent.name, r["id"]): r for r in rows}
    assert len(by_source) == len(POSTGRESQL) + len(MYSQL) + len(SQLSERVER)
    pg = lambda column: by_source[("postgresql", list(POSTGRESQL).index(column) + 1)][column]  # noqa: E731
    # With no schema the encoded forms are what the event holds, exactly.
    assert pg("bigint") == 9223372036854775807
    assert pg("numeric_20_10") == "Ap2h5tI="  # base64 of 11234567890 = 0x029da1e6d2
    assert pg("numeric_numeric_format") == Decimal("1.1234567890")
    assert pg("interval") == 90061000000
    # MySQL's `timestamp` column is ZonedTimestamp text: mixed kinds make a string column.
    assert pg("timestamp") == "1700000000123456"
    assert pg("geometry") == '{"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA","srid":4326}'
    mysql = by_source[("mysql", list(MYSQL).index("int_unsigned") + 1)]
    assert mysql["int_unsigned"] == 4294967295
    assert mysql["_cdc_position"] == "0000000003:00000000000000001002:0000000000"


def test_precise_unsigned_bigints_and_interval_strings_decode_exactly(spark) -> None:
    """BIGINT UNSIGNED's maximum (9 bytes of two's complement) and an ISO interval, as sent."""
    unsigned = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "0", "connect.decimal.precision": "20"}}  # fmt: skip
    no_precision = {**unsigned, "parameters": {"scale": "0"}}
    interval = {"type": "string", "name": "io.debezium.time.Interval"}
    frame = spark.createDataFrame([("AP//////////", "P1Y2M3DT4H5M6.78S")], "u string, i string")
    decoded = frame.select(
        decode_value(F.col("u"), from_connect(unsigned)).alias("u20"),
        decode_value(F.col("u"), from_connect(no_precision)).alias("u38"),
        decode_value(F.col("i"), from_connect(interval)).alias("i"),
    )
    types = [f.dataType.simpleString() for f in decoded.schema.fields]
    assert types == ["decimal(20,0)", "decimal(38,0)", "string"]
    row = decoded.collect()[0]
    assert row.u20 == row.u38 == Decimal("18446744073709551615")
    assert row.i == "P1Y2M3DT4H5M6.78S"
