"""Debezium's logical types: the Connect schema of a column and its encoded value.

The same row value is written differently per connector and per option:
dates as days since the epoch (`io.debezium.time.Date`), timestamps as
microseconds (`MicroTimestamp`, PostgreSQL and SQL Server) or milliseconds
(`Timestamp`, MySQL DATETIME), decimals per `decimal.handling.mode`: the
unscaled value's big-endian two's-complement bytes (`precise`, base64 in
JSON, raw bytes in Avro), a double, or a string.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import lru_cache

from lakehouse.cdc.generate.connect import ConnectSchema
from lakehouse.cdc.generate.tickit import Column

DATE = "io.debezium.time.Date"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
TIMESTAMP = "io.debezium.time.Timestamp"
DECIMAL = "org.apache.kafka.connect.data.Decimal"

Encoder = Callable[[object], object] | None


def decimal_precision_scale(sql_type: str) -> tuple[int, int]:
    """`decimal(8,2)` -> (8, 2)."""
    inside = sql_type[sql_type.index("(") + 1 : sql_type.index(")")]
    precision, scale = (int(part) for part in inside.split(","))
    return precision, scale


def column_schema(column: Column, connector: str, decimal_mode: str) -> ConnectSchema:
    """The Connect schema Debezium gives the column, as a struct member."""
    optional = column.nullable
    kind = column.kind
    if kind == "smallint":
        schema = ConnectSchema("int16", optional)
    elif kind == "int":
        schema = ConnectSchema("int32", optional)
    elif kind in ("varchar", "char"):
        schema = ConnectSchema("string", optional)
    elif kind == "boolean":
        schema = ConnectSchema("boolean", optional)
    elif kind == "date":
        schema = ConnectSchema("int32", optional, DATE, 1)
    elif kind == "timestamp":
        name = TIMESTAMP if connector == "mysql" else MICRO_TIMESTAMP
        schema = ConnectSchema("int64", optional, name, 1)
    elif kind == "decimal":
        schema = _decimal_schema(column, optional, decimal_mode)
    else:
        raise ValueError(f"no Debezium mapping for {column.name} {column.sql_type}")
    if column.default is not None:
        schema = ConnectSchema(
            schema.type, optional, schema.name, schema.version, schema.parameters, column.default
        )
    return schema


def _decimal_schema(column: Column, optional: bool, decimal_mode: str) -> ConnectSchema:
    if decimal_mode == "double":
        return ConnectSchema("float64", optional)
    if decimal_mode == "string":
        return ConnectSchema("string", optional)
    precision, scale = decimal_precision_scale(column.sql_type)
    parameters = (("scale", str(scale)), ("connect.decimal.precision", str(precision)))
    return ConnectSchema("bytes", optional, DECIMAL, 1, parameters)


def column_encoder(column: Column, connector: str, decimal_mode: str, binary: bool) -> Encoder:
    """A function from the row value to the encoded value; None when they are equal.

    `binary` is for Avro, which stores decimal bytes as bytes, not base64 text.
    """
    kind = column.kind
    if kind == "timestamp":
        return _millis if connector == "mysql" else _micros
    if kind != "decimal":
        return None
    _, scale = decimal_precision_scale(column.sql_type)
    if decimal_mode == "double":
        return lambda unscaled: unscaled / 10**scale
    if decimal_mode == "string":
        return lambda unscaled: decimal_text(unscaled, scale)
    return unscaled_bytes if binary else unscaled_base64


def _millis(seconds: object) -> int:
    return seconds * 1000  # type: ignore[operator]


def _micros(seconds: object) -> int:
    return seconds * 1_000_000  # type: ignore[operator]


@lru_cache(maxsize=65_536)
def unscaled_bytes(unscaled: int) -> bytes:
    """Java's BigInteger.toByteArray(): the shortest big-endian two's complement."""
    length = ((unscaled + (unscaled < 0)).bit_length() + 8) // 8
    return unscaled.to_bytes(length, "big", signed=True)


@lru_cache(maxsize=65_536)
def unscaled_base64(unscaled: int) -> str:
    """How JsonConverter writes Connect bytes: base64 text."""
    return base64.b64encode(unscaled_bytes(unscaled)).decode("ascii")


def decimal_text(unscaled: int, scale: int) -> str:
    """The decimal as text with exactly `scale` digits after the point."""
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    if scale == 0:
        return sign + digits
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def row_encoder(encoders: list[Encoder]) -> Callable[[list], list]:
    """Encode a whole row: apply each column's encoder, leave nulls null."""
    active = [(i, encoder) for i, encoder in enumerate(encoders) if encoder is not None]

    def encode(row: list) -> list:
        values = list(row)
        for i, encoder in active:
            value = values[i]
            if value is not None:
                values[i] = encoder(value)
        return values

    return encode
