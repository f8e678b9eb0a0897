"""Issue 14: the nine ways Debezium events decoded wrong, each pinned by a test.

Each test goes through `lakehouse cdc decode`'s decoder (`decode_file`) on a
small file and fails on the decoder before the fix.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from ingestion.decode.events import INCOMPATIBLE_FIX as FIX
from ingestion.decode.single_file import decode_file

from .debezium_events import decimal_field, dumps, envelope, field, numeric, unscaled_base64


def decoded(spark, tmp_path: Path, lines: list[str]) -> list[dict]:
    path = tmp_path / f"events-{len(list(tmp_path.iterdir()))}.json"  # a new file per call
    path.write_text("".join(line + "\n" for line in lines))
    return [json.loads(line, parse_float=Decimal) for line in decode_file(spark, str(path))]


def one_decimal(spark, tmp_path: Path, precision: int, scale: int, value: str) -> list[dict]:
    fields = [field("id", "int32"), decimal_field("d", precision, scale)]
    return decoded(spark, tmp_path, [dumps(envelope(fields, {"id": 1, "d": value}, 10))])


def test_1_decimal_scale_above_6_is_not_rounded(spark, tmp_path: Path) -> None:
    rows = one_decimal(spark, tmp_path, 20, 10, unscaled_base64(11234567890))
    assert rows[0]["d"] == Decimal("1.1234567890")
    assert format(rows[0]["d"], "f") == "1.1234567890"


def test_2_decimal_wider_than_8_bytes_is_not_null(spark, tmp_path: Path) -> None:
    unscaled = 12345678901234567890123456789012345678  # DECIMAL(38,10), 28 integer digits
    rows = one_decimal(spark, tmp_path, 38, 10, unscaled_base64(unscaled))
    assert format(rows[0]["d"], "f") == "1234567890123456789012345678.9012345678"


def test_3_decimal_scale_19_and_more_decodes(spark, tmp_path: Path) -> None:
    rows = one_decimal(spark, tmp_path, 38, 19, unscaled_base64(-15))
    assert format(rows[0]["d"], "f") == "-0.0000000000000000015"
    rows = one_decimal(spark, tmp_path, 38, 38, unscaled_base64(10**38 - 1))
    assert format(rows[0]["d"], "f") == "0." + "9" * 38


def test_4_decimal_format_numeric_decodes(spark, tmp_path: Path) -> None:
    rows = one_decimal(spark, tmp_path, 20, 10, numeric("-1.1234567890"))
    assert format(rows[0]["d"], "f") == "-1.1234567890"
    rows = one_decimal(spark, tmp_path, 12, 0, numeric("1234"))  # digits only: a number
    assert rows[0]["d"] == 1234 and isinstance(rows[0]["d"], int)  # printed as 1234


def test_5_schemaless_bigint_unsigned_above_2_63_is_exact(spark, tmp_path: Path) -> None:
    event = {"before": None, "after": {"id": 1, "u": 18446744073709551615},
             "source": {"connector": "mysql", "file": "mysql-bin.000001", "pos": 4, "row": 0},
             "op": "c"}  # fmt: skip
    rows = decoded(spark, tmp_path, [json.dumps(event)])
    assert rows[0]["u"] == 18446744073709551615
    assert "_rejected" not in rows[0]


def test_6_times_and_variable_scale_decimals_are_decoded(spark, tmp_path: Path) -> None:
    fields = [
        field("id", "int32"),
        field("micro", "int64", "io.debezium.time.MicroTime"),
        field("milli", "int32", "io.debezium.time.Time"),
        field("nano", "int64", "io.debezium.time.NanoTime"),
        {**field("n", "struct", "io.debezium.data.VariableScaleDecimal"),
         "fields": [field("scale", "int32"), field("value", "bytes")]},
    ]  # fmt: skip
    after = {"id": 1, "micro": 45296123456, "milli": 45296123, "nano": 45296123456789,
             "n": {"scale": 2, "value": "BNI="}}  # fmt: skip
    row = decoded(spark, tmp_path, [dumps(envelope(fields, after, 10))])[0]
    assert row["micro"] == "12:34:56.123456"
    assert row["milli"] == "12:34:56.123000"
    assert row["nano"] == "12:34:56.123456789"
    assert row["n"] == "12.34"


def test_7_malformed_schema_field_quarantines_only_its_line(spark, tmp_path: Path) -> None:
    good = envelope([field("id", "int32")], {"id": 1}, 10)
    bad = envelope([field("id", "int32"), {"type": "string", "optional": True}], {"id": 2}, 11)
    rows = decoded(spark, tmp_path, [dumps(good), dumps(bad)])
    assert [r["id"] for r in rows if "id" in r] == [1]
    rejected = [r for r in rows if "_rejected" in r]
    assert [(r["line"], r["_rejected"]) for r in rejected] == [
        (1, "malformed schema: field 1 of 'after' has no name")
    ]


def test_8_widening_inside_a_file_is_by_source_position(spark, tmp_path: Path) -> None:
    first = [field("id", "int32"), field("x", "float"), field("y", "double"), field("k", "int32")]
    second = [field("id", "int32"), field("x", "double"), field("y", "float"), field("k", "int32")]
    lines = [
        dumps(envelope(first, {"id": 1, "x": 1.5, "y": 0.1, "k": 1}, 10)),
        dumps(envelope(second, {"id": 2, "x": 0.1, "y": 2.5, "k": 2}, 20)),
    ]
    rows = decoded(spark, tmp_path, lines)
    assert [(r["id"], r["x"], r["y"]) for r in rows] == [
        (1, Decimal("1.5"), Decimal("0.1")),
        (2, Decimal("0.1"), Decimal("2.5")),
    ]
    # A change that is no widening: the type the source wrote first wins, not the line order.
    changed = [field("id", "int32"), field("k", "string")]
    lines = [  # the later LSN comes first in the file
        dumps(envelope(changed, {"id": 2, "k": "two"}, 20)),
        dumps(envelope([field("id", "int32"), field("k", "int32")], {"id": 1, "k": 1}, 10)),
    ]
    rows = decoded(spark, tmp_path, lines)
    assert [r["k"] for r in rows if "k" in r] == [1]
    assert [(r["line"], r["_rejected"]) for r in rows if "_rejected" in r] == [
        (0, f"incompatible schema change: k: type string cannot be stored in a int column; {FIX}")
    ]


def test_9_cdc_decode_prints_microseconds(spark, tmp_path: Path) -> None:
    fields = [field("id", "int32"), field("ts", "int64", "io.debezium.time.MicroTimestamp")]
    row = decoded(spark, tmp_path, [dumps(envelope(fields, {"id": 1, "ts": 1700000000123456}, 10))])
    assert row[0]["ts"] == "2023-11-14T22:13:20.123456Z"
