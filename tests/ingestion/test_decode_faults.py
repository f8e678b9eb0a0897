"""A file mixing good events with every kind of broken one: the good ones are applied.

Each broken line is quarantined with a reason naming the field at fault;
nothing of the file is lost and `lakehouse ingest` never fails on it.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
from decimal import Decimal
from pathlib import Path

from ingestion.config import load_tables
from ingestion.paths import QUARANTINE, table_path
from ingestion.sources.landing import to_hadoop_uri

from .bronze import run_ingest, settings_for, spark_rows
from .debezium_events import decimal_field, dumps, envelope, field, unscaled_base64
from .test_ingest_faults import write_lines

TOPIC = "shop.public.orders"
WKB = "AQEAAAAAAAAAAADwPwAAAAAAAABA"
FIELDS = [
    field("id", "int32"),
    decimal_field("amount", 10, 2),
    field("placed", "int64", "io.debezium.time.MicroTime"),
    {**field("spot", "struct", "io.debezium.data.geometry.Geometry"),
     "fields": [field("wkb", "bytes"), field("srid", "int32")]},
]  # fmt: skip


def order(order_id: int, amount: str, lsn: int, spot: object = None) -> dict:
    spot = {"wkb": WKB, "srid": 4326} if spot is None else spot
    after = {"id": order_id, "amount": amount, "placed": 3600000001, "spot": spot}
    return envelope(FIELDS, after, lsn)


def with_fields(event: dict, change) -> dict:
    """The event with its before/after schema changed by `change(fields)`."""
    event = copy.deepcopy(event)
    row = copy.deepcopy(event["schema"]["fields"][0]["fields"])
    change(row)
    for part in event["schema"]["fields"][:2]:
        part["fields"] = row
    return event


def test_good_events_apply_and_every_broken_one_is_quarantined(spark, tmp_path: Path) -> None:
    no_scale = with_fields(order(5, unscaled_base64(500), 15),
                           lambda fs: fs[1]["parameters"].pop("scale"))  # fmt: skip
    unnamed = with_fields(order(6, unscaled_base64(600), 16), lambda fs: fs[2].pop("field"))
    lines = [
        dumps(order(1, unscaled_base64(12345), 11)),  # 123.45
        dumps(order(2, "%%not base64%%", 12)),
        dumps(order(3, unscaled_base64(-1), 13)),  # -0.01
        dumps(order(4, unscaled_base64(400), 14, spot=5)),  # a number where a struct belongs
        dumps(no_scale),
        dumps(unnamed),
        dumps(order(7, unscaled_base64(700), 17))[:60],  # truncated JSON
        dumps(order(8, unscaled_base64(0), 18)),  # 0.00
    ]
    landing = tmp_path / "landing"
    bad_file = write_lines(landing, TOPIC, 0, lines)
    table = dataclasses.replace(
        load_tables(database="decode_faults")["category"],
        name="orders", topic=TOPIC, key=("id",), columns={},
    )  # fmt: skip
    conf = settings_for(landing, tmp_path / "lake")
    result = run_ingest(spark, conf, [table])["orders"]
    assert result.committed and result.quarantined == 5

    rows = {r["id"]: r for r in spark_rows(spark, conf, "decode_faults", "orders")}
    assert sorted(rows) == [1, 3, 8]
    assert [rows[i]["amount"] for i in (1, 3, 8)] == [
        Decimal("123.45"), Decimal("-0.01"), Decimal("0.00")
    ]  # fmt: skip
    assert rows[1]["placed"] == "01:00:00.000001"
    assert (bytes(rows[1]["spot"]["wkb"]), rows[1]["spot"]["srid"]) == (
        bytes.fromhex("0101000000000000000000f03f0000000000000040"), 4326
    )  # fmt: skip

    quarantine = spark.read.format("hudi").load(
        to_hadoop_uri(table_path(conf, "decode_faults", QUARANTINE))
    )
    found = {r["line"]: r for r in quarantine.collect()}
    assert {line: r["reason"] for line, r in found.items()} == {
        1: "column amount: cannot decode '%%not base64%%' as decimal(10,2)",
        3: "column spot: cannot decode '5' as struct<wkb:binary,srid:int>",
        4: "field amount: Decimal schema has no 'scale' parameter",
        5: "malformed schema: field 2 of 'after' has no name",
        6: "line is not a JSON object",
    }
    assert all(Path(r["source_file"]).name == bad_file.name for r in found.values())
    assert found[6]["raw"] == lines[6]
    assert json.loads(found[1]["raw"])["payload"]["after"]["id"] == 2
    assert isinstance(found[1]["quarantined_at"], datetime.datetime)
