"""Exact decimal text from Kafka Connect's encodings, in pure Python.

Spark's DecimalType stops at 38 digits and at one scale per column; a
PostgreSQL `numeric(50,10)` or an unbounded `numeric` (Debezium's
VariableScaleDecimal) has no Spark decimal, so its values are kept as the
exact decimal text computed here (run on the executors as a Python UDF, only
for those columns). The same functions are the reference the tests compare
with, so they stay free of Spark.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

# PostgreSQL numeric keeps at most 16383 fraction digits; a larger scale is corrupt.
MAX_SCALE = 16383
PLAIN_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")


def unscaled_bytes(text: str) -> int | None:
    """Base64 big-endian two's complement (Connect's Decimal bytes) -> the integer."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return None
    if not data:
        return None
    return int.from_bytes(data, "big", signed=True)


def scaled_text(unscaled: int, scale: int) -> str:
    """`unscaled * 10**-scale` as plain decimal text with exactly `scale` fraction digits."""
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    if scale <= 0:
        return sign + digits + "0" * -scale
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def decimal_text(raw: str | None, scale: int, is_number: bool = False) -> str | None:
    """A Decimal value as exact text: base64 bytes, or with decimal.format=NUMERIC a number.

    `is_number` says the JSON value was a number, not a string: a digits-only
    string such as "1234" is also valid base64, so the text alone cannot tell.
    """
    if raw is None:
        return None
    if is_number or (PLAIN_NUMBER.match(raw) and not raw.isdigit()):
        return raw if PLAIN_NUMBER.match(raw) else None
    unscaled = unscaled_bytes(raw)
    return None if unscaled is None else scaled_text(unscaled, scale)


def variable_decimal_text(raw: str | None) -> str | None:
    """A VariableScaleDecimal struct `{"scale": s, "value": base64}` as exact text."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
        scale, encoded = value["scale"], value["value"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(scale, int) or not isinstance(encoded, str) or abs(scale) > MAX_SCALE:
        return None
    unscaled = unscaled_bytes(encoded)
    return None if unscaled is None else scaled_text(unscaled, scale)
