"""Apicurio-framed Avro Kafka records: their schema ids found, their bodies decoded exactly.

The records are built as Apicurio's AvroConverter writes them (the id in a
header, or after a 0 byte without headers) and go through the Kafka source's
own framing and decoder; the live chain (tests/cdc) runs the real converter.
"""

from __future__ import annotations

import http.server
import io
import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import ClassVar

import pytest
from fastavro import parse_schema, schemaless_writer
from pyspark.sql import types as T

from ingestion.decode.avro import decode_framed
from ingestion.discovery import avro_key_columns
from ingestion.sources import schema_registry
from ingestion.sources.kafka import framing
from ingestion.sources.schema_registry import (
    KEY_ID_HEADER,
    VALUE_ID_HEADER,
    RegistryUnavailable,
    UnknownSchemaId,
    writer_schemas,
)

# A decimal as Connect's AvroData writes it (the S3 sink's and Apicurio's converter alike).
DECIMAL_8_2 = {
    "type": "bytes", "scale": 2, "precision": 8, "logicalType": "decimal",
    "connect.name": "org.apache.kafka.connect.data.Decimal", "connect.version": 1,
    "connect.parameters": {"scale": "2", "connect.decimal.precision": "8"},
}  # fmt: skip
ROW = {
    "type": "record",
    "name": "Value",
    "namespace": "tickit.ems.sales",
    "fields": [
        {"name": "salesid", "type": "int"},
        {"name": "pricepaid", "type": ["null", DECIMAL_8_2], "default": None},
    ],
    "connect.name": "tickit.ems.sales.Value",
}
ENVELOPE = {
    "type": "record",
    "name": "Envelope",
    "namespace": "tickit.ems.sales",
    "fields": [
        {"name": "before", "type": ["null", ROW], "default": None},
        {"name": "after", "type": ["null", "tickit.ems.sales.Value"], "default": None},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
    ],
    "connect.name": "tickit.ems.sales.Envelope",
}
KAFKA_RECORD = T.StructType(
    [
        T.StructField("file", T.StringType()),
        T.StructField("offset", T.LongType()),
        T.StructField("value", T.BinaryType()),
        T.StructField(
            "headers",
            T.ArrayType(
                T.StructType(
                    [T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())]
                )
            ),
        ),
    ]
)


def avro_body(record: dict) -> bytes:
    out = io.BytesIO()
    schemaless_writer(out, parse_schema(json.loads(json.dumps(ENVELOPE))), record)
    return out.getvalue()


def framed_lines(spark, records: list[tuple], schemas: dict[int, str]) -> list[tuple]:
    frame = spark.createDataFrame(records, KAFKA_RECORD)
    framed = frame.select("file", frame["offset"].alias("line"), *framing(frame["value"]))
    rows = [tuple(r) for r in framed.collect()]
    return list(decode_framed(rows, schemas))


def test_header_and_prefix_framing_decode_to_the_landing_files_lines(spark) -> None:
    created = {"before": None, "after": {"salesid": 7, "pricepaid": Decimal("1234.50")}}
    deleted = {"before": {"salesid": 7, "pricepaid": Decimal("-0.01")}, "after": None}
    body_c = avro_body({**created, "op": "c", "ts_ms": 1700000000000})
    body_d = avro_body({**deleted, "op": "d", "ts_ms": 1700000000001})
    header = [(VALUE_ID_HEADER, (41).to_bytes(8, "big"))]
    records = [
        ("kafka://t/0", 0, body_c, header),
        ("kafka://t/0", 1, b"\x00" + (41).to_bytes(8, "big") + body_d, []),
        ("kafka://t/0", 2, None, []),  # Debezium's tombstone after the delete
        ("kafka://t/0", 3, b'{"schema":{},"payload":{}}', []),  # JsonConverter's, before a switch
    ]
    lines = framed_lines(spark, records, {41: json.dumps(ENVELOPE)})

    assert [line[:2] for line in lines] == [("kafka://t/0", i) for i in range(4)]
    first, second, tombstone, unframed = lines
    assert json.loads(first[2]) == {
        "before": None,
        "after": {"salesid": 7, "pricepaid": "AeI6"},
        "op": "c",
        "ts_ms": 1700000000000,
    }  # fmt: skip  (123450 as Connect's big-endian decimal bytes, base64)
    assert json.loads(second[2])["before"] == {"salesid": 7, "pricepaid": "/w=="}
    schema = json.loads(first[3])
    after = next(f for f in schema["fields"] if f["field"] == "after")
    price = next(f for f in after["fields"] if f["field"] == "pricepaid")
    assert price["name"] == "org.apache.kafka.connect.data.Decimal"
    assert price["parameters"]["scale"] == "2"
    assert (first[4], second[4]) == (None, None)
    assert tombstone == ("kafka://t/0", 2, "null", None, None)
    assert unframed == ("kafka://t/0", 3, '{"schema":{},"payload":{}}', None, None)  # a JSON line


def test_a_body_its_schema_cannot_read_is_one_quarantine_row(spark) -> None:
    header = [(VALUE_ID_HEADER, (5).to_bytes(8, "big"))]
    (line,) = framed_lines(spark, [("kafka://t/1", 9, b"\x02", header)], {5: json.dumps(ENVELOPE)})
    assert line[:2] == ("kafka://t/1", 9)
    assert line[4].startswith("Avro record with schema id 5: ")


class _Registry(http.server.BaseHTTPRequestHandler):
    """Apicurio's `GET /apis/registry/v2/ids/globalIds/<id>`: id 1 only."""

    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requests.append(self.path)
        found = self.path == "/apis/registry/v2/ids/globalIds/1"
        self.send_response(200 if found else 404)
        self.end_headers()
        self.wfile.write(json.dumps(ENVELOPE if found else {"error_code": 404}).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Registry.requests.clear()
    yield f"http://127.0.0.1:{server.server_port}/apis/registry/v2"
    server.shutdown()
    schema_registry._FETCHED.clear()


def test_each_schema_is_fetched_once_and_an_unknown_id_names_itself(registry: str) -> None:
    assert json.loads(writer_schemas(registry, [1, 1])[1]) == ENVELOPE
    assert json.loads(writer_schemas(registry, [1])[1]) == ENVELOPE
    assert _Registry.requests == ["/apis/registry/v2/ids/globalIds/1"]
    with pytest.raises(UnknownSchemaId) as error:
        writer_schemas(registry, [99])
    assert str(error.value).startswith(f"schema id 99 is not in the registry at {registry}")


def test_an_unreachable_registry_is_one_line_naming_its_url(free_port) -> None:
    api = f"http://127.0.0.1:{free_port()}/apis/registry/v2"
    with pytest.raises(RegistryUnavailable) as error:
        writer_schemas(api, [3])
    assert str(error.value).startswith(f"schema registry at {api} did not answer (")
    assert "\n" not in str(error.value)


def test_an_avro_key_names_its_columns_from_its_writer_schema(registry: str) -> None:
    """A found table's key columns (ingestion/discovery.py), from the key's own schema."""
    by_header = {KEY_ID_HEADER: (1).to_bytes(8, "big")}
    assert avro_key_columns(registry, b"\x02", by_header) == ["before", "after", "op", "ts_ms"]
    prefixed = b"\x00" + (1).to_bytes(8, "big") + b"\x02"
    assert avro_key_columns(registry, prefixed, {}) == ["before", "after", "op", "ts_ms"]
    assert avro_key_columns(registry, b"", {}) == []  # no record yet
    assert avro_key_columns(registry, b"{}", {}) is None  # not Avro framed: no key found


def test_a_value_with_a_schema_id_is_avro_and_json_text_is_not() -> None:
    """What the Kafka source looks for before it reads a topic as JSON."""
    before = {"salesid": 7, "pricepaid": None}
    body = avro_body({"before": before, "after": None, "op": "d", "ts_ms": None})
    assert schema_registry.value_schema_id(body, {VALUE_ID_HEADER: (7).to_bytes(8, "big")}) == 7
    prefixed = bytes([0]) + (9).to_bytes(8, "big") + body
    assert schema_registry.value_schema_id(prefixed, {}) == 9
    assert schema_registry.value_schema_id(b'{"schema": {}, "payload": {}}', {}) is None
    assert schema_registry.value_schema_id(body, {KEY_ID_HEADER: (7).to_bytes(8, "big")}) is None
