"""Kafka Connect schemas, and how JsonConverter writes them.

Debezium describes every event with a Connect schema; the JSON formats embed
it (`schemas.enable=true`) and the Avro format converts it. Modelling the
schema once and deriving both keeps the two byte-for-byte consistent with
what Kafka's JsonConverter and Confluent's AvroData produce.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ConnectSchema:
    """A Connect schema: a primitive or a struct, optional or not, maybe named."""

    type: str
    optional: bool = False
    name: str | None = None
    version: int | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    default: Any = None
    fields: tuple[ConnectField, ...] = field(default=())

    def as_optional(self) -> ConnectSchema:
        return replace(self, optional=True)

    def field(self, name: str) -> ConnectField:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(name)


@dataclass(frozen=True)
class ConnectField:
    name: str
    schema: ConnectSchema


def struct(
    name: str | None,
    fields: list[ConnectField] | tuple[ConnectField, ...],
    *,
    optional: bool = False,
    version: int | None = None,
) -> ConnectSchema:
    return ConnectSchema("struct", optional, name, version, fields=tuple(fields))


def json_schema(schema: ConnectSchema, field_name: str | None = None) -> dict[str, Any]:
    """The schema as JsonConverter writes it, keys in JsonConverter's order.

    That order is: type, fields (structs), optional, name, version,
    parameters, default, and for a struct member its `field` name last.
    """
    out: dict[str, Any] = {"type": schema.type}
    if schema.type == "struct":
        out["fields"] = [json_schema(f.schema, f.name) for f in schema.fields]
    out["optional"] = schema.optional
    if schema.name is not None:
        out["name"] = schema.name
    if schema.version is not None:
        out["version"] = schema.version
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    if schema.default is not None:
        out["default"] = schema.default
    if field_name is not None:
        out["field"] = field_name
    return out
