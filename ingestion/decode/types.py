"""Debezium column types: read from any schema flavour, mapped to Spark types.

A landing file describes its columns in one of three ways: a Kafka Connect
JSON schema (enveloped JSON), an Avro schema with `connect.name` properties
(Avro files), or not at all (schemaless, unwrapped: the table config says).
All three become `FieldType`s here, pure Python, so the rest of the decoder
sees one vocabulary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Debezium / Kafka Connect logical type names and the kind each decodes to.
LOGICAL_KINDS = {
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Timestamp": "timestamp_ms",
    "org.apache.kafka.connect.data.Timestamp": "timestamp_ms",
    "io.debezium.time.MicroTimestamp": "timestamp_us",
    "io.debezium.time.NanoTimestamp": "timestamp_ns",
    "io.debezium.time.ZonedTimestamp": "timestamp_tz",
    "io.debezium.time.IsoTimestamp": "timestamp_tz",
}
PRIMITIVE_KINDS = {
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float": "float32",
    "float32": "float32",
    "double": "float64",
    "float64": "float64",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
}
# 8 and 16 bit integers are stored as int: Hudi merges records through Avro,
# which has no narrower integer, and Spark's Parquet reader then fails on them.
SPARK_TYPES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "bigint",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "binary",
    "date": "date",
    "timestamp_ms": "timestamp",
    "timestamp_us": "timestamp",
    "timestamp_ns": "timestamp",
    "timestamp_tz": "timestamp",
}
INT_WIDTH = {"int8": 1, "int16": 2, "int32": 3, "int64": 4}
DECIMAL_RE = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
DEFAULT_DECIMAL_PRECISION = 38


class UnknownTypeError(ValueError):
    """A type name the decoder does not know."""


@dataclass(frozen=True)
class FieldType:
    """How one column is encoded in the event and which Spark type it becomes.

    `kind` is a primitive (int16, string, ...), a temporal logical type
    (date, timestamp_ms, ...) or `decimal`, which then has precision, scale
    and an `encoding`: `bytes` (precise mode, base64 in JSON), `double` or
    `string` (Debezium's other decimal.handling.mode values).
    """

    kind: str
    precision: int = 0
    scale: int = 0
    encoding: str = ""

    @property
    def spark_type(self) -> str:
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return SPARK_TYPES[self.kind]

    @property
    def family(self) -> str:
        if self.kind in INT_WIDTH:
            return "int"
        if self.kind.startswith("timestamp"):
            return "timestamp"
        return self.kind


def parse_config_type(text: str, decimal_handling: str = "precise") -> FieldType:
    """A type from the table config: `int16`, `timestamp_us`, `decimal(8,2)`, ..."""
    text = text.strip().lower()
    match = DECIMAL_RE.match(text)
    if match:
        encoding = {"precise": "bytes", "double": "double", "string": "string"}[decimal_handling]
        return FieldType("decimal", int(match[1]), int(match[2]), encoding)
    if text in SPARK_TYPES:
        return FieldType(text)
    raise UnknownTypeError(f"unknown column type '{text}'")


def from_connect(field: dict) -> FieldType:
    """A field of a Kafka Connect JSON schema (JsonConverter, schemas.enable=true)."""
    name = field.get("name") or ""
    if name == "org.apache.kafka.connect.data.Decimal":
        params = field.get("parameters") or {}
        precision = int(params.get("connect.decimal.precision", DEFAULT_DECIMAL_PRECISION))
        return FieldType("decimal", min(precision, 38), int(params.get("scale", 0)), "bytes")
    if name in LOGICAL_KINDS:
        return FieldType(LOGICAL_KINDS[name])
    kind = PRIMITIVE_KINDS.get(field.get("type", ""))
    if kind is None:
        # Structs, arrays, maps, variable-scale decimals: kept as their JSON text.
        return FieldType("string")
    return FieldType(kind)


def connect_fields(schema: dict, part: str) -> dict[str, FieldType]:
    """Column types of the `after` (or `before`) struct of a Debezium envelope schema."""
    for field in schema.get("fields") or []:
        if field.get("field") == part:
            return {f["field"]: from_connect(f) for f in field.get("fields") or []}
    return {}


def avro_to_connect(schema: dict | str | list) -> dict:
    """Translate an Avro schema written by Confluent's AvroConverter back to Connect's.

    The S3 sink's Avro files keep Connect's logical names in `connect.name` and
    `connect.parameters`; mapping them back lets Avro share the JSON decoder.
    """
    if isinstance(schema, list):
        non_null = [s for s in schema if s != "null"]
        connect = avro_to_connect(non_null[0]) if non_null else {"type": "string"}
        return {**connect, "optional": True}
    if isinstance(schema, str):
        return {"type": _AVRO_PRIMITIVES.get(schema, "string"), "optional": False}
    avro_type = schema.get("type")
    out: dict = {"optional": False}
    if schema.get("connect.name"):
        out["name"] = schema["connect.name"]
    if schema.get("connect.parameters"):
        out["parameters"] = dict(schema["connect.parameters"])
    if schema.get("logicalType") == "decimal":
        out["name"] = "org.apache.kafka.connect.data.Decimal"
        params = dict(out.get("parameters") or {})
        params.setdefault("scale", str(schema.get("scale", 0)))
        params.setdefault("connect.decimal.precision", str(schema.get("precision", 38)))
        out["parameters"] = params
    if avro_type == "record":
        out["type"] = "struct"
        out["fields"] = [
            {**avro_to_connect(f["type"]), "field": f["name"]} for f in schema.get("fields", [])
        ]
    elif isinstance(avro_type, dict | list):
        out.update(avro_to_connect(avro_type))
    else:
        connect_type = schema.get("connect.type") or _AVRO_PRIMITIVES.get(avro_type, "string")
        out["type"] = connect_type
    return out


_AVRO_PRIMITIVES = {
    "int": "int32",
    "long": "int64",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "null": "string",
}


def incompatibility(incoming: FieldType, table: FieldType) -> str | None:
    """Why values of `incoming` cannot be stored in a `table` column, or None if they can.

    Compatible means lossless: same type, a narrower integer, a decimal whose
    integer and fraction digits both fit, any decimal encoding of the same
    decimal, or anything into a string column.
    """
    if table.kind == "string" or incoming == table:
        return None
    if incoming.family == table.family == "int":
        if INT_WIDTH[incoming.kind] <= INT_WIDTH[table.kind]:
            return None
    elif table.kind == "decimal" and incoming.kind == "decimal":
        if incoming.scale <= table.scale and (
            incoming.precision - incoming.scale <= table.precision - table.scale
        ):
            return None
    elif table.kind == "decimal" and incoming.kind in ("float32", "float64", "string"):
        return None  # decimal.handling.mode=double or string
    elif table.kind == "decimal" and incoming.family == "int":
        digits = {"int8": 3, "int16": 5, "int32": 10, "int64": 19}[incoming.kind]
        if digits <= table.precision - table.scale:
            return None
    elif (
        incoming.family == table.family and incoming.family in ("timestamp", "date", "boolean")
    ) or (table.kind == "float64" and incoming.kind in ("float32", "float64")):
        return None
    return f"type {incoming.spark_type} cannot be stored in a {table.spark_type} column"
