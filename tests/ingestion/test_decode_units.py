"""Pure parts of Debezium decoding, no Spark: type mapping, schemas, widening, exact text."""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import uuid

import pytest

from ingestion.decode.avro import _jsonable
from ingestion.decode.events import infer_type
from ingestion.decode.single_file import json_line
from ingestion.decode.types import (
    FieldType,
    SchemaError,
    from_connect,
    from_spark_type,
    incompatibility,
    resolve_columns,
    version_fields,
    widen,
)
from ingestion.decode.values import decimal_text, scaled_text, variable_decimal_text

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def decimal_field(precision: str | None, scale: str | None) -> dict:
    parameters = {"scale": scale, "connect.decimal.precision": precision}
    return {"type": "bytes", "name": DECIMAL, "field": "d",
            "parameters": {k: v for k, v in parameters.items() if v is not None}}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "connect_type", "spark_type"),
    [
        ("io.debezium.time.Date", "int32", "date"),
        ("io.debezium.time.Time", "int32", "string"),
        ("io.debezium.time.MicroTime", "int64", "string"),
        ("io.debezium.time.NanoTime", "int64", "string"),
        ("io.debezium.time.Timestamp", "int64", "timestamp"),
        ("io.debezium.time.MicroTimestamp", "int64", "timestamp"),
        ("io.debezium.time.NanoTimestamp", "int64", "timestamp"),
        ("io.debezium.time.ZonedTimestamp", "string", "timestamp"),
        ("io.debezium.time.ZonedTime", "string", "string"),
        ("io.debezium.time.Year", "int32", "int"),
        ("io.debezium.time.MicroDuration", "int64", "bigint"),
        ("io.debezium.time.Interval", "string", "string"),
        ("io.debezium.data.VariableScaleDecimal", "struct", "string"),
        ("io.debezium.data.Json", "string", "string"),
        ("io.debezium.data.Uuid", "string", "string"),
        ("io.debezium.data.Enum", "string", "string"),
        ("io.debezium.data.EnumSet", "string", "string"),
        ("io.debezium.data.Bits", "bytes", "binary"),
        ("io.debezium.data.Xml", "string", "string"),
        ("io.debezium.data.geometry.Geometry", "struct", "struct<wkb:binary,srid:int>"),
        ("io.debezium.data.geometry.Point", "struct",
         "struct<x:double,y:double,wkb:binary,srid:int>"),
        (None, "array", "string"),
    ],
)  # fmt: skip
def test_every_debezium_semantic_type_has_a_spark_type(
    name: str | None, connect_type: str, spark_type: str
) -> None:
    assert from_connect({"type": connect_type, "name": name}).spark_type == spark_type


def test_decimals_take_precision_and_scale_from_the_schema() -> None:
    assert from_connect(decimal_field("20", "10")).spark_type == "decimal(20,10)"
    assert from_connect(decimal_field("38", "38")).spark_type == "decimal(38,38)"
    assert from_connect(decimal_field("38", "0")).spark_type == "decimal(38,0)"
    assert from_connect(decimal_field(None, "19")).spark_type == "decimal(38,19)"
    assert from_connect(decimal_field("3", "5")).spark_type == "decimal(5,5)"
    too_wide = from_connect(decimal_field("50", "5"))
    assert (too_wide.kind, too_wide.spark_type, too_wide.scale) == ("decimal_text", "string", 5)


def test_a_decimal_without_a_scale_is_a_schema_error_naming_the_field() -> None:
    with pytest.raises(SchemaError, match="field d: Decimal schema has no 'scale'"):
        from_connect(decimal_field("10", None))
    with pytest.raises(SchemaError, match="field d: Decimal parameter 'scale' is not a number"):
        from_connect(decimal_field("10", "two"))


def test_a_schema_field_without_a_name_is_a_schema_error() -> None:
    schema = {"type": "struct", "fields": [
        {"field": "after", "type": "struct",
         "fields": [{"type": "int32", "field": "id"}, {"type": "string"}]},
    ]}  # fmt: skip
    with pytest.raises(SchemaError, match="field 1 of 'after' has no name"):
        version_fields(json.dumps(schema))
    with pytest.raises(SchemaError, match="not JSON"):
        version_fields("{")
    with pytest.raises(SchemaError, match="not a JSON object"):
        version_fields("7")


def test_widening_is_by_source_order_and_keeps_the_widest() -> None:
    int16, int64 = FieldType("int16"), FieldType("int64")
    f32, f64 = FieldType("float32"), FieldType("float64")
    d82, d122 = FieldType("decimal", 8, 2, "bytes"), FieldType("decimal", 12, 2, "bytes")
    assert widen(int16, int64) == widen(int64, int16) == int64
    assert widen(f32, f64) == widen(f64, f32) == f64
    assert widen(d82, d122) == widen(d122, d82) == d122
    d123 = FieldType("decimal", 12, 3, "bytes")  # scale up, integer digits kept
    assert widen(d82, d123) == widen(d123, d82) == d123
    assert widen(d122, FieldType("decimal", 12, 4, "bytes")) == FieldType("decimal", 14, 4, "bytes")
    assert widen(FieldType("int32"), FieldType("string")) is None
    versions = [{"x": f32, "y": FieldType("int32")}, {"x": f64, "y": FieldType("string")}]
    assert resolve_columns({}, versions) == {"x": f64, "y": FieldType("int32")}
    assert resolve_columns({}, versions[::-1]) == {"x": f64, "y": FieldType("string")}
    # Declared (bronze) types widen too; a narrower version still fits the wider type.
    assert resolve_columns({"x": f32}, versions) == {"x": f64, "y": FieldType("int32")}
    assert incompatibility(f32, f64) is None
    assert incompatibility(f64, f32) is not None


def test_bronze_column_types_read_back_as_their_kinds() -> None:
    assert from_spark_type("decimal(38,20)") == FieldType("decimal", 38, 20, "bytes")
    assert from_spark_type("struct<wkb:binary,srid:int>") == FieldType("geometry")
    assert from_spark_type("bigint") == FieldType("int64")
    assert from_spark_type("string") == FieldType("string")


def test_schemaless_integers_beyond_64_bits_become_exact_decimals() -> None:
    assert infer_type([1, 2**63 - 1]) == FieldType("int64")
    assert infer_type([1, 18446744073709551615]) == FieldType("decimal", 20, 0, "bytes")
    assert infer_type([10**40]).spark_type == "string"


def test_exact_decimal_text_from_connect_encodings() -> None:
    assert scaled_text(11234567890, 10) == "1.1234567890"
    assert scaled_text(-5, 3) == "-0.005"
    assert scaled_text(0, 2) == "0.00"
    assert scaled_text(12, -2) == "1200"
    assert decimal_text("AP//////////", 0) == "18446744073709551615"
    assert decimal_text("/w==", 2) == "-0.01"
    assert decimal_text("1234", 0) == "-2658824"  # digits-only: base64 of 0xd76df8 ...
    assert decimal_text("1234", 0, is_number=True) == "1234"  # ... unless a JSON number
    assert decimal_text("-12.50", 2) == "-12.50"
    assert decimal_text("not base64!", 2) is None
    assert variable_decimal_text('{"scale":2,"value":"BNI="}') == "12.34"
    assert variable_decimal_text('{"value":"BNI="}') is None


def test_avro_logical_values_go_back_to_connect_json() -> None:
    assert _jsonable(datetime.date(1970, 1, 2)) == 1
    assert _jsonable(datetime.time(0, 0, 1, 500000)) == 1500
    stamp = datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC)
    assert _jsonable(stamp) == 1000
    assert _jsonable(uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert _jsonable(decimal.Decimal("-0.01")) == "/w=="
    wide = decimal.Decimal("-" + "9" * 35 + "." + "9" * 30)  # MySQL DECIMAL(65,30), 65 digits
    assert decimal_text(_jsonable(wide), 30) == "-" + "9" * 35 + "." + "9" * 30


def test_printed_lines_keep_every_digit() -> None:
    line = json_line(["d", "z", "b"], [decimal.Decimal("1.1234567890"), decimal.Decimal("0E-10"),
                                      b"\x05"])  # fmt: skip
    assert line == '{"d":1.1234567890,"z":0.0000000000,"b":"BQ=="}'
    assert json.loads(line, parse_float=decimal.Decimal)["d"] == decimal.Decimal("1.1234567890")


# BIGINT UNSIGNED's largest value: with bigint.unsigned.handling.mode=precise
# Debezium sends a Decimal of scale 0, the unscaled value as big-endian two's
# complement, which takes 9 bytes here (a leading 0x00 keeps it positive).
MAX_UNSIGNED = 18446744073709551615
MAX_UNSIGNED_BYTES = base64.b64encode(MAX_UNSIGNED.to_bytes(9, "big", signed=True)).decode()


def test_a_precise_bigint_unsigned_is_an_exact_decimal() -> None:
    assert base64.b64decode(MAX_UNSIGNED_BYTES) == b"\x00" + b"\xff" * 8
    assert MAX_UNSIGNED_BYTES == "AP//////////"
    # Debezium 3.x names precision 20; a schema without one gets 38 digits: both hold it.
    assert from_connect(decimal_field("20", "0")) == FieldType("decimal", 20, 0, "bytes")
    assert from_connect(decimal_field(None, "0")) == FieldType("decimal", 38, 0, "bytes")
    assert decimal_text(MAX_UNSIGNED_BYTES, 0) == str(MAX_UNSIGNED)


def test_an_interval_string_is_kept_as_its_text() -> None:
    interval = {"type": "string", "name": "io.debezium.time.Interval", "field": "i"}
    assert from_connect(interval) == FieldType("string")
