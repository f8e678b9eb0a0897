"""Avro object container files, decoded on the executors, one block at a time.

Spark's own Avro reader fails a whole file on one corrupt block and drops
Kafka Connect's `connect.name` properties that carry Debezium's logical types.
This reader walks the container's blocks itself (fastavro decodes the
records), keeps every readable block, turns a corrupt one into a quarantine row
and resynchronises on the next sync marker. Each record leaves as the JSON
text of its Debezium envelope plus the Connect schema of its file, the same
shape as an enveloped JSON line.
"""

from __future__ import annotations

import base64
import datetime
import io
import json
import uuid
import zlib
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from ingestion.decode.types import avro_to_connect

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
RAW_SAMPLE_BYTES = 4096
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

# (file, line, raw, connect schema JSON, error)
AvroRow = tuple[str, int, str, str | None, str | None]


class CorruptBlockError(ValueError):
    """A block whose framing or records cannot be read."""


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    """Avro's zig-zag varint at `pos`; returns (value, next position)."""
    shift = result = 0
    while True:
        if pos >= len(data):
            raise CorruptBlockError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptBlockError("varint too long")


def _jsonable(value: Any) -> Any:
    """Avro datum -> JSON value as Kafka Connect's JsonConverter would write it.

    fastavro turns Avro logical types (decimal, date, time-millis,
    timestamp-millis, uuid) into Python objects; each goes back to the number
    or text Connect's JsonConverter writes, so one decoder serves both formats.
    """
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Decimal):  # fastavro decodes decimals; Connect writes their bytes
        sign, digits, _ = value.as_tuple()  # not scaleb: its context rounds to 28 digits
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        size = max(1, (unscaled.bit_length() + 8) // 8)
        return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode("ascii")
    if isinstance(value, datetime.datetime):  # Connect Timestamp: timestamp-millis
        aware = value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        return (aware - EPOCH) // datetime.timedelta(milliseconds=1)
    if isinstance(value, datetime.date):  # Connect Date: days since the epoch
        return (value - EPOCH.date()).days
    if isinstance(value, datetime.time):  # Connect Time: time-millis, milliseconds of the day
        return (value.hour * 3600 + value.minute * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _decompress(codec: str, payload: bytes) -> bytes:
    if codec == "null":
        return payload
    if codec == "deflate":
        return zlib.decompress(payload, -15)
    raise CorruptBlockError(f"unsupported codec {codec}")


def _file_error(path: str, data: bytes, reason: str) -> AvroRow:
    """The one row of a file that cannot be read at all, with a sample of its bytes."""
    return (path, 0, base64.b64encode(data[:RAW_SAMPLE_BYTES]).decode(), None, reason)


def _read_block(data: bytes, pos: int, sync: bytes, codec: str, parsed: Any) -> tuple[list, int]:
    """The records of the block at `pos` and where the next block starts."""
    from fastavro import schemaless_reader

    count, pos = _read_long(data, pos)
    size, pos = _read_long(data, pos)
    if count < 0 or size < 0 or pos + size + SYNC_SIZE > len(data):
        raise CorruptBlockError("block length beyond end of file")
    payload = data[pos : pos + size]
    if data[pos + size : pos + size + SYNC_SIZE] != sync:
        raise CorruptBlockError("sync marker mismatch")
    block = io.BytesIO(_decompress(codec, payload))
    records = [schemaless_reader(block, parsed) for _ in range(count)]
    if block.tell() != len(block.getvalue()):
        raise CorruptBlockError("block has trailing bytes")
    return records, pos + size + SYNC_SIZE


def decode_container(path: str, data: bytes) -> Iterator[AvroRow]:
    """All records of one container file; corrupt parts become rows with an error."""
    from fastavro import parse_schema, reader

    if not data.startswith(MAGIC):
        yield _file_error(path, data, "not an Avro object container file (bad magic)")
        return
    try:
        header_reader = reader(io.BytesIO(data))
        writer_schema = header_reader.writer_schema
        codec = header_reader.metadata.get("avro.codec", "null")
        sync = header_reader._header["sync"]
    except Exception as error:  # a corrupt header makes the whole file unreadable
        yield _file_error(path, data, f"corrupt Avro header: {error}")
        return
    parsed = parse_schema(writer_schema)
    connect_schema = json.dumps(avro_to_connect(writer_schema), separators=(",", ":"))
    pos, line = _first_block(data, sync), 0
    while pos < len(data):
        start = pos
        try:
            records, pos = _read_block(data, pos, sync, codec, parsed)
        except Exception as error:  # one corrupt block: its row says so, the next block reads
            following = data.find(sync, start + 1)
            pos = len(data) if following < 0 else following + SYNC_SIZE
            sample = base64.b64encode(data[start : min(pos, start + RAW_SAMPLE_BYTES)]).decode()
            yield (path, line, sample, None, f"corrupt Avro block at byte {start}: {error}")
            line += 1
            continue
        for record in records:
            yield _record_row(path, line, record, connect_schema)
            line += 1


def _record_row(path: str, line: int, record: Any, connect_schema: str) -> AvroRow:
    """One record as an enveloped JSON line, or a reject row if it has no JSON form."""
    try:
        raw = "null" if record is None else json.dumps(_jsonable(record), separators=(",", ":"))
    except (TypeError, ValueError, OverflowError) as error:
        return (path, line, str(record)[:RAW_SAMPLE_BYTES], None, f"Avro record: {error}")
    return (path, line, raw, connect_schema, None)


def decode_framed(
    records: Iterable[tuple[str, int, bytes | None, int | None]], schemas: dict[int, str]
) -> Iterator[AvroRow]:
    """Schemaless Avro bodies (Kafka records), each with the global id of its writer schema.

    A record whose id is None is a Debezium tombstone when it has no value, and
    otherwise no Apicurio-framed Avro: it goes on as a text line, for the JSON
    decoder to read (a topic switched from JsonConverter to Avro holds both)
    or to quarantine. With no id header the id is the 8 bytes after the
    leading 0 (sources/kafka.py).
    """
    from fastavro import parse_schema, schemaless_reader

    parsed: dict[int, tuple[Any, str]] = {}
    for path, line, value, global_id in records:
        if value is None:
            yield (path, line, "null", None, None)
            continue
        if global_id is None:
            yield (path, line, value.decode("utf-8", errors="replace"), None, None)
            continue
        if global_id not in parsed:
            schema = json.loads(schemas[global_id])
            connect = json.dumps(avro_to_connect(schema), separators=(",", ":"))
            parsed[global_id] = (parse_schema(schema), connect)
        writer, connect_schema = parsed[global_id]
        try:
            record = schemaless_reader(io.BytesIO(value), writer)
        except Exception as error:  # a body its schema cannot read: quarantined, not fatal
            sample = base64.b64encode(value[:RAW_SAMPLE_BYTES]).decode()
            yield (path, line, sample, None, f"Avro record with schema id {global_id}: {error}")
            continue
        yield _record_row(path, line, record, connect_schema)


def _first_block(data: bytes, sync: bytes) -> int:
    """Position just after the header's sync marker."""
    return data.index(sync) + SYNC_SIZE
