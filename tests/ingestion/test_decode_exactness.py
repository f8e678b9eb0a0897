"""`lakehouse cdc decode` prints what the files hold: long bytes, case-different names, MongoDB.

And the ingest path sets MongoDB's events aside with the same reason.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

from ingestion.config import load_tables
from ingestion.decode.events import MONGODB_REASON
from ingestion.decode.single_file import decode_paths
from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri

from .bronze import run_ingest, settings_for
from .debezium_events import dumps, envelope, field
from .test_ingest_faults import write_lines

LONG_BYTES = bytes(range(100))  # Spark's base64() starts a new MIME line after 57 bytes

# A Debezium 2.x MongoDB create as JsonConverter writes it: `after` is Extended JSON text.
MONGO_SCHEMA = {
    "type": "struct", "optional": False, "name": "shop.inventory.customers.Envelope",
    "fields": [
        {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1,
         "field": "before"},
        {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1,
         "field": "after"},
        {"type": "struct", "optional": False, "name": "io.debezium.connector.mongo.Source",
         "field": "source", "fields": [
             {"type": "string", "optional": False, "field": "connector"},
             {"type": "string", "optional": False, "field": "db"},
             {"type": "string", "optional": False, "field": "collection"},
             {"type": "int64", "optional": False, "field": "ts_ms"},
             {"type": "int32", "optional": False, "field": "ord"}]},
        {"type": "string", "optional": True, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ],
}  # fmt: skip
MONGO_PAYLOAD = {
    "before": None,
    "after": '{"_id": {"$numberLong": "1004"}, "first_name": "Anne", "email": "a@b.com"}',
    "source": {"version": "2.5.0.Final", "connector": "mongodb", "name": "shop",
               "ts_ms": 1700000000000, "snapshot": "false", "db": "inventory",
               "rs": "rs0", "collection": "customers", "ord": 1},
    "op": "c", "ts_ms": 1700000000001,
}  # fmt: skip
MONGO_LINES = [
    json.dumps({"schema": MONGO_SCHEMA, "payload": MONGO_PAYLOAD}),
    json.dumps(MONGO_PAYLOAD),  # schemas.enable=false
]


def printed(spark, *files: Path) -> list[dict]:
    return [json.loads(line) for line in decode_paths(spark, [str(f) for f in files])]


def test_long_bytes_print_as_one_unbroken_base64(spark, tmp_path: Path) -> None:
    path = tmp_path / "bytes.json"
    fields = [field("id", "int32"), field("blob", "bytes")]
    after = {"id": 1, "blob": base64.b64encode(LONG_BYTES).decode()}
    path.write_text(dumps(envelope(fields, after, 10)) + "\n")
    (row,) = printed(spark, path)
    assert row["blob"] == base64.b64encode(LONG_BYTES).decode()
    assert base64.b64decode(row["blob"], validate=True) == LONG_BYTES


def test_names_differing_only_in_case_decode_file_by_file(spark, tmp_path: Path) -> None:
    upper, lower = tmp_path / "a-upper.json", tmp_path / "b-lower.json"
    upper.write_text(dumps(envelope([field("id", "int32"), field("O_CHAR", "string")],
                                    {"id": 1, "O_CHAR": "from upper"}, 10)) + "\n")  # fmt: skip
    lower.write_text(dumps(envelope([field("id", "int32"), field("o_char", "string")],
                                    {"id": 2, "o_char": "from lower"}, 20)) + "\n")  # fmt: skip
    rows = printed(spark, upper, lower)
    assert [r.get("_rejected") for r in rows] == [None, None]
    by_id = {r["id"]: r for r in rows}
    assert (by_id[1]["O_CHAR"], by_id[1]["o_char"]) == ("from upper", None)
    assert (by_id[2]["O_CHAR"], by_id[2]["o_char"]) == (None, "from lower")


def test_cdc_decode_rejects_mongodb_events_naming_the_cause(spark, tmp_path: Path) -> None:
    path = tmp_path / "mongo.json"
    path.write_text("".join(line + "\n" for line in MONGO_LINES))
    rows = printed(spark, path)
    assert [(r.get("_rejected"), r.get("line")) for r in rows] == [
        (MONGODB_REASON, 0),
        (MONGODB_REASON, 1),
    ]
    assert "MongoDB" in MONGODB_REASON and "`after`" in MONGODB_REASON


def test_ingest_quarantines_mongodb_events_with_the_reason(spark, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    write_lines(landing, "shop.inventory.customers", 0, MONGO_LINES)
    table = dataclasses.replace(
        load_tables(database="decode_mongo")["category"],
        name="customers", topic="shop.inventory.customers", key=("_id",), columns={},
    )  # fmt: skip
    conf = settings_for(landing, tmp_path / "lake")
    result = run_ingest(spark, conf, [table])["customers"]
    assert result.quarantined == 2
    quarantine = spark.read.format("hudi").load(
        to_hadoop_uri(table_path(conf, "decode_mongo", QUARANTINE))
    )
    rows = {(r["line"], r["table_name"], r["reason"]) for r in quarantine.collect()}
    assert rows == {(0, "customers", MONGODB_REASON), (1, "customers", MONGODB_REASON)}
