"""Helpers for tests: Debezium change events as Kafka Connect's JsonConverter writes them."""

from __future__ import annotations

import base64
import json
from decimal import Decimal

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def unscaled_base64(unscaled: int, extra_bytes: int = 0) -> str:
    """Connect's Decimal bytes: big-endian two's complement (BigInteger.toByteArray), base64."""
    size = max(1, (unscaled.bit_length() + 8) // 8) + extra_bytes
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def decimal_field(name: str, precision: int, scale: int) -> dict:
    parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return {"type": "bytes", "optional": True, "name": DECIMAL, "version": 1,
            "parameters": parameters, "field": name}  # fmt: skip


def field(name: str, kind: str, semantic: str | None = None) -> dict:
    out = {"type": kind, "optional": True, "field": name}
    return {**out, "name": semantic} if semantic else out


def envelope(fields: list[dict], after: dict, lsn: int, op: str = "c") -> dict:
    """A PostgreSQL create with its JsonConverter schema (schemas.enable=true)."""
    row = {"type": "struct", "optional": True, "name": "shop.public.t.Value", "fields": fields}
    schema = {"type": "struct", "name": "shop.public.t.Envelope", "fields": [
        {**row, "field": "before"}, {**row, "field": "after"},
        {"type": "struct", "fields": [], "optional": False, "field": "source"},
        {"type": "string", "optional": False, "field": "op"},
    ]}  # fmt: skip
    source = {"connector": "postgresql", "db": "shop", "schema": "public", "table": "t",
              "lsn": lsn, "ts_ms": 1700000000000}  # fmt: skip
    payload = {"before": None, "after": after, "source": source, "op": op, "ts_ms": 1}
    return {"schema": schema, "payload": payload}


def numeric(text: str) -> str:
    """A marker for `dumps`: a decimal written as a JSON number (decimal.format=NUMERIC)."""
    return f"@{text}@"


def dumps(event: dict) -> str:
    """One JSON line; `numeric(...)` values become bare JSON numbers, every digit kept."""
    return json.dumps(event).replace('"@', "").replace('@"', "")


def exact_text(unscaled: int, scale: int) -> str:
    """The expected decimal text, from Python's Decimal (not the decoder)."""
    return format(Decimal(f"{unscaled}E-{scale}"), "f")  # from text: no context rounding
