"""Acceptance 2: every record parses as its format; the schema describes the payload."""

from __future__ import annotations

import json

import fastavro
import pytest

from lakehouse.cdc.generate.tickit import TABLES

from .landing_reader import check_value, connect_schema_of, parse_path, payload_of

ENVELOPE_FIELDS = ["before", "after", "source", "op", "ts_ms", "transaction"]


def fields_of(schema: dict) -> dict[str, dict]:
    return {f["field"]: f for f in schema["fields"]}


def test_every_record_parses_and_files_follow_the_sink_layout(any_format):
    summary, landing = any_format
    fmt = landing.format
    extension = "avro" if fmt == "avro" else "json"
    assert sum(len(r) for r in landing.records.values()) == summary.records
    for topic, records in landing.records.items():
        for path in {r.path for r in records}:
            parts = parse_path(path)
            assert parts["ext"] == extension
            assert parts["topic"] == topic
        offsets_by_partition: dict[int, list[int]] = {}
        for record in records:
            offsets_by_partition.setdefault(record.partition, []).append(record.offset)
            payload = payload_of(record, fmt)
            if payload is not None and fmt != "unwrapped":
                assert list(payload) == ENVELOPE_FIELDS
        for offsets in offsets_by_partition.values():
            assert offsets == list(range(len(offsets))), "offsets are contiguous from 0"


def test_files_hold_at_most_flush_size_records(any_format):
    summary, landing = any_format
    flush = landing.manifest["options"]["flush_size"]
    sizes = [f.records for f in summary.files]
    assert max(sizes) == flush
    assert all(0 < size <= flush for size in sizes)


@pytest.mark.parametrize("fmt", ["json", "unwrapped"])
def test_schema_describes_payload_exactly(generated, fmt):
    _, landing = generated(format=fmt)
    checked = 0
    for records in landing.records.values():
        for record in records:
            schema = connect_schema_of(record, fmt)
            if schema is None:
                assert record.tombstone
                continue
            check_value(schema, record.value["payload"])
            checked += 1
    assert checked > 4_000


def test_checker_rejects_mismatches():
    schema = {
        "type": "struct",
        "optional": False,
        "fields": [
            {"type": "int16", "optional": False, "field": "id"},
            {"type": "string", "optional": True, "field": "name"},
        ],
    }
    check_value(schema, {"id": 3, "name": None})
    for bad in ({"id": None, "name": "x"}, {"id": 70_000, "name": "x"}, {"name": "x", "id": 1}):
        with pytest.raises(AssertionError):
            check_value(schema, bad)


def test_json_envelope_schema_is_debeziums(landing_json):
    sale = next(r for r in landing_json.records["tickit.ecomm.sale"] if not r.tombstone)
    schema = sale.value["schema"]
    assert schema["name"] == "tickit.ecomm.sale.Envelope"
    assert schema["version"] == 1
    assert schema["optional"] is False
    top = fields_of(schema)
    assert list(top) == ENVELOPE_FIELDS
    assert top["before"]["name"] == top["after"]["name"] == "tickit.ecomm.sale.Value"
    assert top["before"]["optional"] is True
    assert top["source"]["name"] == "io.debezium.connector.mysql.Source"
    assert top["transaction"]["name"] == "event.block"
    assert top["op"] == {"type": "string", "optional": False, "field": "op"}
    columns = fields_of(top["after"])
    assert columns["salesid"] == {"type": "int32", "optional": False, "field": "salesid"}
    assert columns["qtysold"] == {"type": "int16", "optional": False, "field": "qtysold"}
    assert columns["pricepaid"] == {
        "type": "bytes",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": {"scale": "2", "connect.decimal.precision": "8"},
        "field": "pricepaid",
    }
    assert columns["saletime"]["name"] == "io.debezium.time.Timestamp"
    assert columns["saletime"]["type"] == "int64"
    snapshot = fields_of(top["source"])["snapshot"]
    assert snapshot["name"] == "io.debezium.data.Enum"
    assert snapshot["default"] == "false"


@pytest.mark.parametrize(
    ("topic", "column", "expected"),
    [
        ("tickit.ems.event", "starttime", ("int64", "io.debezium.time.MicroTimestamp")),
        ("tickit.ecomm.listing", "listtime", ("int64", "io.debezium.time.Timestamp")),
        ("tickit.ecomm.date", "caldate", ("int32", "io.debezium.time.Date")),
        ("tickit.ecomm.date", "holiday", ("boolean", None)),
        ("tickit.ems.venue", "venueid", ("int16", None)),
        ("tickit.crm.user", "likejazz", ("boolean", None)),
        ("tickit.crm.user", "username", ("string", None)),
    ],
)
def test_logical_types_per_connector(landing_json, topic, column, expected):
    record = next(r for r in landing_json.records[topic] if not r.tombstone)
    field = fields_of(fields_of(record.value["schema"])["after"])[column]
    assert (field["type"], field.get("name")) == expected


def test_holiday_carries_the_column_default(landing_json):
    record = landing_json.records["tickit.ecomm.date"][0]
    holiday = fields_of(fields_of(record.value["schema"])["after"])["holiday"]
    assert holiday == {"type": "boolean", "optional": True, "default": False, "field": "holiday"}


def test_sql_server_schema_names_keep_database_and_schema(landing_json):
    record = landing_json.records["tickit.crm.user"][0]
    assert record.value["schema"]["name"] == "tickit.crm.dbo.user.Envelope"


def test_schemaless_json_is_the_bare_payload(generated):
    _, landing = generated(format="json-schemaless")
    record = landing.records["tickit.ecomm.sale"][0]
    assert list(record.value) == ENVELOPE_FIELDS
    assert isinstance(record.value["after"]["pricepaid"], str)


@pytest.mark.parametrize(
    ("mode", "kind", "sample"), [("double", "float64", float), ("string", "string", str)]
)
def test_decimal_handling_modes(generated, mode, kind, sample):
    _, landing = generated(format="json", decimal_handling_mode=mode)
    record = landing.records["tickit.ecomm.listing"][0]
    price = fields_of(fields_of(record.value["schema"])["after"])["priceperticket"]
    assert price == {"type": kind, "optional": True, "field": "priceperticket"}
    after = record.value["payload"]["after"]
    assert isinstance(after["priceperticket"], sample)
    assert float(after["totalprice"]) == pytest.approx(
        after["numtickets"] * float(after["priceperticket"])
    )


def test_precise_decimals_are_base64_unscaled(landing_json):
    import base64

    def unscaled(text: str) -> int:
        return int.from_bytes(base64.b64decode(text), "big", signed=True)

    records = [r for r in landing_json.records["tickit.ecomm.listing"] if not r.tombstone]
    listings = [r.value["payload"]["after"] for r in records if r.value["payload"]["after"]]
    assert len(listings) > 1_900
    for after in listings:
        price, total = unscaled(after["priceperticket"]), unscaled(after["totalprice"])
        assert price % 100 == 0, "TICKIT prices are whole dollars"
        assert total == after["numtickets"] * price
    # 841.00 is unscaled 84100 = 0x01 0x48 0x84: base64 "AUiE".
    assert unscaled("AUiE") == 84_100


def test_avro_files_are_confluent_container_files(generated):
    summary, landing = generated(format="avro")
    path = landing.root / summary.files[0].path
    data = path.read_bytes()
    assert data[:4] == b"Obj\x01"
    reader = fastavro.reader(open(path, "rb"))  # noqa: SIM115
    assert reader.metadata["avro.codec"] == "null"
    header = reader.metadata["avro.schema"]
    assert ", " not in header[:200], "compact like Java's Schema.toString()"
    schema = json.loads(header)
    assert schema[0] == "null", "the value schema is optional: tombstones are null"
    envelope = schema[1]
    table = next(t for t in TABLES.values() if t.topic == summary.files[0].topic)
    assert (envelope["name"], envelope["namespace"]) == ("Envelope", table.server_topic)
    assert envelope["connect.name"] == f"{table.server_topic}.Envelope"
    assert envelope["connect.version"] == 1
    records = list(reader)
    assert len(records) == summary.files[0].records
    assert records[0]["op"] == "r"


def test_avro_decimal_and_logical_type_properties(generated):
    _, landing = generated(format="avro")
    record = landing.records["tickit.ecomm.sale"][0]
    envelope = record.schema[1]
    assert envelope["namespace"] == "tickit.ecomm.sale"
    value = envelope["fields"][0]["type"][1]
    assert value["name"] == "Value" and "namespace" not in value
    assert value["connect.name"] == "tickit.ecomm.sale.Value"
    columns = {f["name"]: f for f in value["fields"]}
    assert columns["pricepaid"] == {
        "name": "pricepaid",
        "type": [
            "null",
            {
                "type": "bytes",
                "scale": 2,
                "precision": 8,
                "connect.version": 1,
                "connect.parameters": {"scale": "2", "connect.decimal.precision": "8"},
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "logicalType": "decimal",
            },
        ],
        "default": None,
    }
    assert columns["qtysold"]["type"] == {"type": "int", "connect.type": "int16"}
    assert columns["dateid"]["type"] == {"type": "int", "connect.type": "int16"}
    assert columns["saletime"]["type"][1]["connect.name"] == "io.debezium.time.Timestamp"
    after_field = envelope["fields"][1]
    assert after_field == {"name": "after", "type": ["null", "Value"], "default": None}
    source = envelope["fields"][2]["type"]
    assert (source["name"], source["namespace"]) == ("Source", "io.debezium.connector.mysql")
    assert str(record.value["after"]["commission"]).count(".") == 1


def test_every_table_has_a_topic_with_its_source(landing_json):
    for table in TABLES.values():
        entry = landing_json.manifest["topics"][table.topic]
        assert entry["table"] == table.name
        assert entry["key_fields"] == [table.key]
