"""Spark expressions that turn Debezium's encodings into typed columns.

The decoder reads every column as the raw JSON text of its value; these
expressions apply the encoding the schema names (days since epoch, micro or
milli timestamps, base64 two's-complement decimals with their scale) and run
on the executors as ordinary Spark SQL, with no Python UDF in the hot path.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ingestion.decode.types import FieldType

# conv() is exact up to 64 bits; wider decimals fall back to a slower path.
MAX_CONV_BYTES = 8


def decode_decimal_bytes(raw: Column, field: FieldType) -> Column:
    """Base64 big-endian two's-complement unscaled value -> decimal(p, s)."""
    data = F.unbase64(raw)
    hex_digits = F.hex(data)
    unsigned = F.conv(hex_digits, 16, 10).cast("decimal(38,0)")
    negative = F.substring(hex_digits, 1, 1).isin(*"89ABCDEF")
    modulus = F.pow(F.lit(2.0), F.length(data) * 8).cast("decimal(38,0)")
    unscaled = F.when(negative, unsigned - modulus).otherwise(unsigned)
    value = (unscaled / F.lit(10**field.scale).cast("decimal(38,0)")).cast(field.spark_type)
    return F.when(F.length(data) <= MAX_CONV_BYTES, value)


def decode_value(raw: Column, field: FieldType) -> Column:
    """The typed value of one column, from the raw text of its JSON value."""
    kind = field.kind
    if kind == "date":
        return F.date_add(F.lit("1970-01-01").cast("date"), raw.cast("int"))
    if kind == "timestamp_ms":
        return F.timestamp_millis(raw.cast("bigint"))
    if kind == "timestamp_us":
        return F.timestamp_micros(raw.cast("bigint"))
    if kind == "timestamp_ns":
        return F.timestamp_micros(F.floor(raw.cast("bigint") / 1000).cast("bigint"))
    if kind == "timestamp_tz":
        return raw.cast("timestamp")
    if kind == "decimal":
        if field.encoding == "bytes":
            return decode_decimal_bytes(raw, field)
        return raw.cast(field.spark_type)
    if kind == "bytes":
        return F.unbase64(raw)
    return raw.cast(field.spark_type)


def to_column(raw: Column, incoming: FieldType, target: FieldType) -> Column:
    """Decode with the event's own encoding, then store as the table's type."""
    if target.kind == "decimal" and incoming.kind in ("float32", "float64", "string"):
        return raw.cast(target.spark_type)  # from the text, so no binary rounding
    value = decode_value(raw, incoming)
    if incoming.spark_type != target.spark_type:
        value = value.cast(target.spark_type)
    return value
