"""Connect schema -> Avro schema, the way Confluent's AvroData converts it.

The Avro files carry their writer schema in the header; to match what the
Confluent S3 sink writes, the schema has AvroData's shape (records named
after the Connect name split at the last dot, `connect.name`,
`connect.version`, `connect.parameters`, `connect.default`, `connect.type`
properties, decimals as bytes with `logicalType` decimal, precision and
scale) and is printed as Java's `Schema.toString()` prints it: compact JSON,
namespaces only where they change, a named type written once and then
referred to by name.
"""

from __future__ import annotations

import json
from typing import Any

from lakehouse.cdc.generate.connect import ConnectSchema
from lakehouse.cdc.generate.encoding import DECIMAL

_PRIMITIVES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
}


def avro_schema(schema: ConnectSchema) -> Any:
    """The Avro schema (JSON-able, key order as Java prints it) of a Connect schema."""
    return _Converter().convert(schema, namespace=None)


def avro_schema_text(schema: ConnectSchema) -> str:
    """The schema text as it appears under `avro.schema` in a container file header."""
    return json.dumps(avro_schema(schema), separators=(",", ":"), ensure_ascii=False)


class _Converter:
    def __init__(self) -> None:
        self._defined: set[str] = set()

    def convert(self, schema: ConnectSchema, namespace: str | None) -> Any:
        base = self._base(schema, namespace)
        if not schema.optional:
            return base
        if schema.default is not None:
            return [base, "null"]
        return ["null", base]

    def _base(self, schema: ConnectSchema, namespace: str | None) -> Any:
        if schema.type == "struct":
            return self._record(schema, namespace)
        out: dict[str, Any] = {"type": _PRIMITIVES[schema.type]}
        parameters = dict(schema.parameters)
        if schema.name == DECIMAL:
            out["scale"] = int(parameters["scale"])
            out["precision"] = int(parameters["connect.decimal.precision"])
        self._metadata(out, schema)
        if schema.name == DECIMAL:
            out["logicalType"] = "decimal"
        if schema.type in ("int8", "int16"):
            out["connect.type"] = schema.type
        return out if len(out) > 1 else out["type"]

    def _record(self, schema: ConnectSchema, namespace: str | None) -> Any:
        full_name = schema.name or "io.confluent.connect.avro.ConnectDefault"
        space, _, short = full_name.rpartition(".")
        if full_name in self._defined:
            return short if space == (namespace or "") else full_name
        self._defined.add(full_name)
        out: dict[str, Any] = {"type": "record", "name": short}
        if space != (namespace or ""):
            out["namespace"] = space
        out["fields"] = [self._field(f.name, f.schema, space) for f in schema.fields]
        self._metadata(out, schema)
        return out

    def _field(self, name: str, schema: ConnectSchema, namespace: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name, "type": self.convert(schema, namespace)}
        if schema.default is not None:
            out["default"] = schema.default
        elif schema.optional:
            out["default"] = None
        return out

    @staticmethod
    def _metadata(out: dict[str, Any], schema: ConnectSchema) -> None:
        if schema.version is not None:
            out["connect.version"] = schema.version
        if schema.parameters:
            out["connect.parameters"] = dict(schema.parameters)
        if schema.default is not None:
            out["connect.default"] = schema.default
        if schema.name is not None:
            out["connect.name"] = schema.name
