"""Debezium column types: read from any schema flavour, mapped to Spark types.

A landing file describes its columns in one of three ways: a Kafka Connect
JSON schema (enveloped JSON), an Avro schema with `connect.name` properties
(Avro files), or not at all (schemaless, unwrapped: the table config says).
All three become `FieldType`s here, pure Python, so the rest of the decoder
sees one vocabulary. docs/contracts.md has the full mapping table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
# Debezium / Kafka Connect logical type names and the kind each decodes to.
LOGICAL_KINDS = {
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Time": "time_ms",
    "org.apache.kafka.connect.data.Time": "time_ms",
    "io.debezium.time.MicroTime": "time_us",
    "io.debezium.time.NanoTime": "time_ns",
    "io.debezium.time.Timestamp": "timestamp_ms",
    "org.apache.kafka.connect.data.Timestamp": "timestamp_ms",
    "io.debezium.time.MicroTimestamp": "timestamp_us",
    "io.debezium.time.NanoTimestamp": "timestamp_ns",
    "io.debezium.time.ZonedTimestamp": "timestamp_tz",
    "io.debezium.time.IsoTimestamp": "timestamp_tz",
    "io.debezium.data.geometry.Geometry": "geometry",
    "io.debezium.data.geometry.Geography": "geometry",
    "io.debezium.data.geometry.Point": "point",
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
# Times have no Spark type: they are kept as exact `HH:MM:SS.ffffff` text.
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
    "time_ms": "string",
    "time_us": "string",
    "time_ns": "string",
    "timestamp_ms": "timestamp",
    "timestamp_us": "timestamp",
    "timestamp_ns": "timestamp",
    "timestamp_tz": "timestamp",
    "decimal_text": "string",
    "geometry": "struct<wkb:binary,srid:int>",
    "point": "struct<x:double,y:double,wkb:binary,srid:int>",
}
# Every type name conf/tables.yml accepts and the kind it declares: the
# project's own kinds, then Spark / SQL names. `(n)` takes a length (kept as
# text whatever it is), `(p)` / `(p,s)` a precision and scale; `decimal` and
# `numeric` alone are unbounded (Debezium's VariableScaleDecimal), kept as
# exact text. SQL's TINYINT is int16 because every connector sends it so
# (MySQL TINYINT, SQL Server's 0..255). docs/contracts.md shows this table.
CONFIG_TYPES = {
    **{kind: kind for kind in SPARK_TYPES if kind != "decimal_text"},
    "tinyint": "int16",
    "smallint": "int16",
    "int": "int32",
    "integer": "int32",
    "bigint": "int64",
    "float": "float32",
    "real": "float32",
    "double": "float64",
    "double precision": "float64",
    "bool": "boolean",
    "text": "string",
    "varchar": "string",
    "varchar(n)": "string",
    "char": "string",
    "char(n)": "string",
    "binary": "bytes",
    "bytea": "bytes",
    "timestamp": "timestamp_us",
    "decimal(p,s)": "decimal",
    "decimal(p)": "decimal",
    "decimal": "decimal_text",
    "numeric(p,s)": "decimal",
    "numeric(p)": "decimal",
    "numeric": "decimal_text",
}
CONFIG_TYPE_RE = re.compile(r"^([a-z][a-z0-9_ ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")
# How each decimal.handling.mode sends a decimal, bounded and unbounded.
DECIMAL_ENCODINGS = {"precise": "bytes", "double": "double", "string": "string"}
UNBOUNDED_ENCODINGS = {"precise": "variable", "double": "double", "string": "string"}
INT_WIDTH = {"int8": 1, "int16": 2, "int32": 3, "int64": 4}
FLOAT_WIDTH = {"float32": 1, "float64": 2}
DECIMAL_RE = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
DEFAULT_DECIMAL_PRECISION = 38
MAX_SPARK_PRECISION = 38


class UnknownTypeError(ValueError):
    """A type name the decoder does not know."""


class SchemaError(ValueError):
    """A Connect schema that cannot be read; the lines that carry it are quarantined."""


@dataclass(frozen=True)
class FieldType:
    """How one column is encoded in the event and which Spark type it becomes.

    `kind` is a primitive (int16, string, ...), a temporal logical type
    (date, time_us, timestamp_ms, ...), `geometry` / `point`, `decimal`, or
    `decimal_text` (a decimal Spark cannot hold: precision above 38, or
    Debezium's VariableScaleDecimal), which is kept as its exact text.
    Decimals have precision, scale and an `encoding`: `bytes` (precise mode:
    base64 two's complement, or a JSON number with decimal.format=NUMERIC),
    `double` or `string` (Debezium's other decimal.handling.mode values), or
    `variable` (a {scale, value} struct per value).
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
        if self.kind in FLOAT_WIDTH:
            return "float"
        if self.kind.startswith("timestamp"):
            return "timestamp"
        if self.kind.startswith("time_"):
            return "time"
        return self.kind


def decimal_type(precision: int, scale: int, encoding: str = "bytes") -> FieldType:
    """A decimal: Spark's DecimalType(p, s) when it fits, exact text when it cannot.

    A scale above the precision (PostgreSQL allows numeric(3,5)) needs a
    precision of `scale` in Spark; a negative scale or more than 38 digits has
    no Spark decimal at all.
    """
    if precision < 1:
        raise SchemaError(f"invalid decimal precision {precision}")
    if scale < 0 or max(precision, scale) > MAX_SPARK_PRECISION:
        return FieldType("decimal_text", precision, scale, encoding)
    return FieldType("decimal", max(precision, scale), scale, encoding)


def parse_config_type(text: str, decimal_handling: str = "precise") -> FieldType:
    """A type from the table config: a name of CONFIG_TYPES (`int16`, `bigint`, `decimal(8,2)`)."""
    name = " ".join(text.strip().lower().split())
    match = CONFIG_TYPE_RE.match(name)
    kind = _config_kind(match) if match else None
    if match is None or kind is None:
        known = ", ".join(CONFIG_TYPES)
        raise UnknownTypeError(f"unknown column type '{name}' (known: {known})")
    if kind == "decimal_text":
        return FieldType("decimal_text", 0, 0, UNBOUNDED_ENCODINGS[decimal_handling])
    if kind != "decimal":
        return FieldType(kind)
    precision, scale = int(match[2]), int(match[3] or 0)
    if precision < 1:
        raise UnknownTypeError(f"decimal precision below 1 in '{name}'")
    if scale > precision:
        raise UnknownTypeError(f"decimal scale above its precision in '{name}'")
    return decimal_type(precision, scale, DECIMAL_ENCODINGS[decimal_handling])


def _config_kind(match: re.Match[str]) -> str | None:
    """The kind of a parsed name: its CONFIG_TYPES key is the name with `(n)`, `(p)`, `(p,s)`."""
    base, first, second = match[1], match[2], match[3]
    if first is None:
        return CONFIG_TYPES.get(base)
    if second is not None:
        return CONFIG_TYPES.get(f"{base}(p,s)")
    return CONFIG_TYPES.get(f"{base}(n)") or CONFIG_TYPES.get(f"{base}(p)")


def from_spark_type(simple: str) -> FieldType:
    """The kind of a bronze column from its Spark type (`DataType.simpleString()`)."""
    match = DECIMAL_RE.match(simple)
    if match:
        return FieldType("decimal", int(match[1]), int(match[2]), "bytes")
    structs = {SPARK_TYPES["geometry"]: "geometry", SPARK_TYPES["point"]: "point"}
    kind = structs.get(simple) or CONFIG_TYPES.get(simple, "string")
    return FieldType("string" if kind.startswith("decimal") else kind)


def _int_parameter(params: dict, key: str, name: str, default: int | None = None) -> int:
    value = params.get(key, default)
    if value is None:
        raise SchemaError(f"field {name}: Decimal schema has no '{key}' parameter")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SchemaError(f"field {name}: Decimal parameter '{key}' is not a number") from None


def from_connect(field: dict) -> FieldType:
    """A field of a Kafka Connect JSON schema (JsonConverter, schemas.enable=true)."""
    if not isinstance(field, dict):
        raise SchemaError(f"schema field is not an object: {str(field)[:80]}")
    name = field.get("name") or ""
    label = str(field.get("field", "?"))
    if name == DECIMAL:
        params = field.get("parameters") or {}
        if not isinstance(params, dict):
            raise SchemaError(f"field {label}: Decimal parameters are not an object")
        scale = _int_parameter(params, "scale", label)
        precision = _int_parameter(
            params, "connect.decimal.precision", label, DEFAULT_DECIMAL_PRECISION
        )
        try:
            return decimal_type(precision, scale)
        except SchemaError as error:
            raise SchemaError(f"field {label}: {error}") from None
    if name == VARIABLE_SCALE_DECIMAL:
        return FieldType("decimal_text", 0, 0, "variable")
    if name in LOGICAL_KINDS:
        return FieldType(LOGICAL_KINDS[name])
    kind = PRIMITIVE_KINDS.get(field.get("type", ""))
    if kind is None:
        # Structs, arrays (PostgreSQL arrays), maps: kept as their exact JSON text.
        return FieldType("string")
    return FieldType(kind)


def _struct_fields(fields: object, where: str) -> dict[str, FieldType]:
    if not isinstance(fields, list):
        raise SchemaError(f"malformed schema: '{where}' has no list of fields")
    out: dict[str, FieldType] = {}
    for index, field in enumerate(fields):
        name = field.get("field") if isinstance(field, dict) else None
        if not isinstance(name, str) or not name:
            raise SchemaError(f"malformed schema: field {index} of '{where}' has no name")
        out[name] = from_connect(field)
    return out


def connect_fields(schema: dict, part: str) -> dict[str, FieldType]:
    """Column types of the `after` (or `before`) struct of a Debezium envelope schema."""
    for field in schema.get("fields") or []:
        if isinstance(field, dict) and field.get("field") == part:
            return _struct_fields(field.get("fields") or [], part)
    return {}


def version_fields(schema_text: str) -> dict[str, FieldType]:
    """Column types a line's Connect schema declares; SchemaError if it cannot be read.

    The schema is the envelope's (types from `after`, else `before`), or for
    ExtractNewRecordState rows the row's own struct, `__` fields left out.
    """
    try:
        schema = json.loads(schema_text)
    except ValueError:
        raise SchemaError("malformed schema: not JSON") from None
    if not isinstance(schema, dict):
        raise SchemaError("malformed schema: not a JSON object")
    fields = schema.get("fields") or []
    payload = [f for f in fields if isinstance(f, dict) and f.get("field") == "payload"]
    if schema.get("type") == "struct" and payload:
        schema = payload[0]
    found = connect_fields(schema, "after") or connect_fields(schema, "before")
    if found:
        return found
    own = _struct_fields(schema.get("fields") or [], "value")
    return {name: kind for name, kind in own.items() if not name.startswith("__")}


def widen(current: FieldType, incoming: FieldType) -> FieldType | None:
    """The wider of two types when one widens into the other losslessly, else None.

    int8 -> int16 -> int32 -> int64, float32 -> float64, and a decimal whose
    integer digits and scale both hold the other's (precision up at the same
    scale, or scale up with the integer digits kept: decimal(10,2) ->
    decimal(14,4)); the widest wins whichever came first. Two decimals
    neither holds widen to one holding both while Spark can (38 digits).
    """
    if current == incoming:
        return current
    if current.family == incoming.family == "int":
        return max(current, incoming, key=lambda t: INT_WIDTH[t.kind])
    if current.family == incoming.family == "float":
        return max(current, incoming, key=lambda t: FLOAT_WIDTH[t.kind])
    if current.encoding != "bytes" or incoming.encoding != "bytes":
        return None
    if current.kind == incoming.kind == "decimal":
        digits = max(t.precision - t.scale for t in (current, incoming))
        scale = max(current.scale, incoming.scale)
        if digits + scale > MAX_SPARK_PRECISION:
            return None
        return FieldType("decimal", digits + scale, scale, "bytes")
    decimals = {"decimal", "decimal_text"}
    if current.kind in decimals and incoming.kind in decimals and current.scale == incoming.scale:
        return max(current, incoming, key=lambda t: t.precision)
    return None


def resolve_columns(
    declared: dict[str, FieldType], versions: Iterable[dict[str, FieldType]]
) -> dict[str, FieldType]:
    """The batch's columns: declared ones widened when the source widens them, new ones too.

    `declared` holds bronze's stored columns and the config's: a version that
    widens one (int -> bigint, decimal(10,2) -> decimal(14,2)) makes the
    wider type the batch's, and so bronze's and the changelog's in its
    commits, while narrower versions still fit it. A declared column is never
    widened into exact text (a decimal past 38 digits): that is no type
    promotion Hudi can apply to stored files. `versions` must come in
    source-position order, so the type of a column that changes
    incompatibly is the first one the source wrote, every run.
    """
    columns = dict(declared)
    for version in versions:
        for name, kind in version.items():
            if name not in columns:
                columns[name] = kind
                continue
            wider = widen(columns[name], kind)
            if wider is not None and (name not in declared or wider.kind != "decimal_text"):
                columns[name] = wider
    return columns


def avro_to_connect(schema: dict | str | list, named: dict[str, dict] | None = None) -> dict:
    """Translate an Avro schema written by a Connect AvroConverter back to Connect's.

    The S3 sink's Avro files and Apicurio's converter keep Connect's logical
    names in `connect.name` and `connect.parameters`; mapping them back lets
    Avro share the JSON decoder. A record named once is referenced by its full
    name afterwards (a Debezium envelope's `after` names `before`'s type):
    `named` holds those seen so far.
    """
    named = {} if named is None else named
    if isinstance(schema, list):
        non_null = [s for s in schema if s != "null"]
        connect = avro_to_connect(non_null[0], named) if non_null else {"type": "string"}
        return {**connect, "optional": True}
    if isinstance(schema, str):
        if schema in named:
            return {**named[schema], "optional": False}
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
            {**avro_to_connect(f["type"], named), "field": f["name"]}
            for f in schema.get("fields", [])
        ]
        # By full name; by its bare name too, as a reference inside its namespace may be.
        named[_full_name(schema)] = out
        named.setdefault(schema.get("name", ""), out)
    elif isinstance(avro_type, dict | list):
        out.update(avro_to_connect(avro_type, named))
    else:
        connect_type = schema.get("connect.type") or _AVRO_PRIMITIVES.get(avro_type, "string")
        out["type"] = connect_type
    return out


def _full_name(record: dict) -> str:
    name = record.get("name", "")
    namespace = record.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


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
    if table.spark_type == "string" or incoming == table:
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
    ) or (table.kind == "float64" and incoming.family == "float"):
        return None
    return f"type {incoming.spark_type} cannot be stored in a {table.spark_type} column"
