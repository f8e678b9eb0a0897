"""Spark expressions that turn Debezium's encodings into typed columns.

The decoder reads every column as the raw JSON text of its value; these
expressions apply the encoding the schema names (days since epoch, milli /
micro / nano times and timestamps, base64 two's-complement decimals with
their scale) and run on the executors as ordinary Spark SQL. Only decimals
Spark cannot hold (precision above 38, VariableScaleDecimal) go through a
Python UDF, to exact text. An expression yields null for a value it cannot
decode; the decoder turns that into a quarantined event naming the column.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType

from ingestion.decode import values
from ingestion.decode.types import MAX_SPARK_PRECISION, FieldType

BASE64_RE = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
NUMBER_RE = r"^-?[0-9]+(\.[0-9]+)?$"
JSON_NUMBER_RE = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
TWO_POW_64 = str(2**64)
# 128 bits: more than any 38-digit unscaled value needs (10**38 < 2**127).
MAX_HEX_DIGITS = 32
# timestamp_millis multiplies by 1000 and throws past the long range (Spark's
# timestamps end long before): a larger value fails its event, not the job.
MAX_MILLIS = 2**63 // 1000


def _magnitude(hex_digits: Column, negative: Column) -> Column:
    """|value| of a two's complement number as decimal(38,0), exact up to 128 bits.

    A negative value's magnitude is its bitwise complement plus one; leading
    sign bytes are stripped, so unscaled values of any byte length decode.
    """
    complement = F.translate(hex_digits, "0123456789ABCDEF", "FEDCBA9876543210")
    bits = F.regexp_replace(F.when(negative, complement).otherwise(hex_digits), "^0+", "")
    padded = F.lpad(bits, MAX_HEX_DIGITS, "0")
    high = F.conv(F.substring(padded, 1, 16), 16, 10).cast("decimal(38,0)")
    low = F.conv(F.substring(padded, 17, 16), 16, 10).cast("decimal(38,0)")
    unsigned = high * F.lit(TWO_POW_64).cast("decimal(20,0)") + low
    value = (unsigned + F.when(negative, 1).otherwise(0)).cast("decimal(38,0)")
    return F.when(F.length(bits) <= MAX_HEX_DIGITS, value)


def _scaled(magnitude: Column, negative: Column, field: FieldType) -> Column:
    """`[-]digitsE-scale`, cast exactly to decimal(p,s): no division, so no rounding."""
    sign = F.when(negative, F.lit("-")).otherwise(F.lit(""))
    text = F.concat(sign, magnitude.cast("string"), F.lit(f"E-{field.scale}"))
    return text.cast(field.spark_type)


def decode_decimal_bytes(raw: Column, field: FieldType) -> Column:
    """Base64 big-endian two's-complement unscaled value -> decimal(p, s), exactly."""
    hex_digits = F.hex(F.unbase64(raw))
    negative = F.substring(hex_digits, 1, 1).isin(*"89ABCDEF")
    value = _scaled(_magnitude(hex_digits, negative), negative, field)
    return F.when(raw.rlike(BASE64_RE), value)


def decode_decimal(
    raw: Column, field: FieldType, is_number: Column, exact: Column | None = None
) -> Column:
    """Decimal in precise mode: base64 bytes, or a JSON number (decimal.format=NUMERIC).

    A number comes as `exact`, read from the line straight into a decimal
    wide enough to show extra fraction digits (see `exact_number_type`): the
    raw text of a nested number has been through a double in Spark's JSON
    reader. A number with more fraction digits than the scale would be
    rounded, and one with too many integer digits does not fit, so both
    decode to null instead.
    """
    number = raw.rlike(JSON_NUMBER_RE) & (~raw.rlike(r"^[0-9]+$") | is_number)
    exact = raw.cast(exact_number_type(field)) if exact is None else exact
    stored = exact.cast(field.spark_type)
    from_number = F.when(stored == exact, stored)
    return F.when(number, from_number).otherwise(decode_decimal_bytes(raw, field))


def exact_number_type(field: FieldType) -> DecimalType:
    """decimal(38, w) with the field's integer digits and every fraction digit left.

    Reading a JSON number into decimal(p, s) directly would round extra
    fraction digits away silently; this type keeps them for the check.
    """
    integer_digits = field.precision - field.scale
    return DecimalType(MAX_SPARK_PRECISION, MAX_SPARK_PRECISION - integer_digits)


def decode_decimal_text(raw: Column, field: FieldType, is_number: Column) -> Column:
    """Decimals Spark cannot hold, as exact text (a Python UDF: these columns are rare)."""
    if field.encoding == "variable":
        return F.udf(values.variable_decimal_text, "string")(raw)
    if field.encoding != "bytes":
        return F.when(raw.rlike(NUMBER_RE), raw)
    text = F.udf(values.decimal_text, "string")
    return text(raw, F.lit(field.scale), is_number)


def time_text(raw: Column, per_second: int, digits: int) -> Column:
    """A time of day (or MySQL's signed TIME duration) as `[-]HH:MM:SS.fraction` text."""
    value = raw.cast("bigint")
    magnitude = F.abs(value).cast("decimal(20,0)")
    seconds = F.floor(magnitude / per_second).cast("bigint")
    fraction = (magnitude % per_second).cast("bigint") * (10**digits // per_second)
    text = F.format_string(
        f"%s%02d:%02d:%02d.%0{digits}d",
        F.when(value < 0, F.lit("-")).otherwise(F.lit("")),
        F.floor(seconds / 3600).cast("bigint"),
        F.floor((seconds % 3600) / 60).cast("bigint"),
        seconds % 60,
        fraction,
    )
    return F.when(value.isNotNull(), text)


def decode_geometry(raw: Column, field: FieldType) -> Column:
    """Geometry / Geography / Point structs: WKB bytes (base64 in JSON) and SRID."""
    if field.kind == "point":
        parsed = F.from_json(raw, "struct<x:double,y:double,wkb:string,srid:int>")
        head = [parsed["x"].alias("x"), parsed["y"].alias("y")]
    else:
        parsed = F.from_json(raw, "struct<wkb:string,srid:int>")
        head = []
    wkb = F.when(parsed["wkb"].rlike(BASE64_RE), F.unbase64(parsed["wkb"]))
    value = F.struct(*head, wkb.alias("wkb"), parsed["srid"].alias("srid"))
    return F.when(wkb.isNotNull(), value)


def timestamp_from_millis(millis: Column) -> Column:
    """timestamp_millis, but null (so quarantined) instead of a job-failing overflow."""
    value = millis.cast("bigint")
    return F.when(F.abs(value) < MAX_MILLIS, F.timestamp_millis(value))


def _temporal(raw: Column, kind: str) -> Column:
    """Dates, times and timestamps from their Debezium / Connect encodings."""
    if kind == "date":
        return F.date_add(F.lit("1970-01-01").cast("date"), raw.cast("int"))
    if kind == "timestamp_ms":
        return timestamp_from_millis(raw)
    if kind == "timestamp_us":
        return F.timestamp_micros(raw.cast("bigint"))
    if kind == "timestamp_ns":  # exact integer division: doubles lose nanos at this size
        micros = F.floor(raw.cast("bigint").cast("decimal(20,0)") / 1000).cast("bigint")
        return F.timestamp_micros(micros)
    if kind == "timestamp_tz":
        return raw.cast("timestamp")
    per_second, digits = {"time_ms": (1000, 6), "time_us": (10**6, 6), "time_ns": (10**9, 9)}[kind]
    return time_text(raw, per_second, digits)


def decode_value(
    raw: Column, field: FieldType, is_number: Column | None = None, exact: Column | None = None
) -> Column:
    """The typed value of one column, from the raw text of its JSON value.

    `exact` is the value read exactly as `exact_number_type`, for decimals
    sent as JSON numbers (see `decode_decimal`).
    """
    is_number = F.lit(False) if is_number is None else is_number
    kind = field.kind
    if kind == "date" or kind.startswith(("time_", "timestamp")):
        return _temporal(raw, kind)
    if kind == "decimal":
        if field.encoding == "bytes":
            return decode_decimal(raw, field, is_number, exact)
        return raw.cast(field.spark_type)
    if kind == "decimal_text":
        return decode_decimal_text(raw, field, is_number)
    if kind in ("geometry", "point"):
        return decode_geometry(raw, field)
    if kind == "bytes":
        return F.when(raw.rlike(BASE64_RE) | (raw == ""), F.unbase64(raw))
    return raw.cast(field.spark_type)


def to_column(
    raw: Column,
    incoming: FieldType,
    target: FieldType,
    is_number: Column | None = None,
    exact: Column | None = None,
) -> Column:
    """Decode with the event's own encoding, then store as the table's type."""
    if target.kind == "decimal" and incoming.kind in ("float32", "float64", "string"):
        return raw.cast(target.spark_type)  # from the text, so no binary rounding
    value = decode_value(raw, incoming, is_number, exact)
    if incoming.spark_type != target.spark_type:
        value = value.cast(target.spark_type)
    return value
