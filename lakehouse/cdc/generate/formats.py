"""The four landing formats: how a record and a whole file are serialised.

- `json`: Kafka Connect JsonConverter, `schemas.enable=true`: one
  `{"schema":...,"payload":...}` line per event, the Debezium envelope.
- `json-schemaless`: the same payload without the schema.
- `unwrapped`: `ExtractNewRecordState` (`delete.handling.mode=rewrite`,
  `drop.tombstones=false`, per-connector `add.fields`) under JsonConverter with
  schemas; the SMT drops truncate events, so they never reach Kafka.
- `avro`: Avro object container files as the Confluent S3 sink's AvroFormat
  writes them: the AvroData schema of the optional envelope in the header
  (Java's key order and compact printing), the null codec, blocks cut at
  64,000 bytes, and a sync marker derived from the seed and file path.

Tombstones are the JSON line `null`, and in Avro the null branch of the
writer schema's union.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from lakehouse.cdc.generate.avro_schema import avro_schema, avro_schema_text
from lakehouse.cdc.generate.connect import json_schema
from lakehouse.cdc.generate.debezium import Event, TopicCodec

_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_AVRO_MAGIC = b"Obj\x01"


class LandingFormat:
    """What every format shares: codecs per (table, schema version)."""

    name = ""
    extension = "json"
    tombstone: Any = "null"
    has_schema = True

    def __init__(self, decimal_mode: str) -> None:
        self.decimal_mode = decimal_mode
        self._codecs: dict[tuple[str, int], TopicCodec] = {}

    def codec(self, event: Event) -> TopicCodec:
        key = (event.table.name, event.version)
        codec = self._codecs.get(key)
        if codec is None:
            codec = self._codecs[key] = TopicCodec(event.table, event.version, self.decimal_mode)
        return codec

    def accepts(self, event: Event) -> bool:
        """False when the converter chain drops the event before Kafka."""
        return True

    def schema_id(self, event: Event) -> tuple[str, int] | None:
        """Identity of the record's value schema; a change rotates the sink's file."""
        return (event.table.name, event.version) if self.has_schema else None

    def record(self, event: Event) -> Any:
        raise NotImplementedError

    def render(self, records: list[Any], schema_id: tuple[str, int] | None, sync: bytes) -> bytes:
        """One landing file: JSON formats write one record per line."""
        return ("\n".join(records) + "\n").encode("utf-8")


class EnvelopeJson(LandingFormat):
    name = "json"

    def __init__(self, decimal_mode: str) -> None:
        super().__init__(decimal_mode)
        self._schema_text: dict[tuple[str, int], str] = {}

    def _schema(self, event: Event) -> str:
        key = (event.table.name, event.version)
        text = self._schema_text.get(key)
        if text is None:
            text = self._schema_text[key] = _JSON(json_schema(self.codec(event).envelope_schema))
        return text

    def record(self, event: Event) -> str:
        payload = _JSON(self.codec(event).envelope(event, binary=False))
        return f'{{"schema":{self._schema(event)},"payload":{payload}}}'


class SchemalessJson(LandingFormat):
    name = "json-schemaless"
    has_schema = False

    def record(self, event: Event) -> str:
        return _JSON(self.codec(event).envelope(event, binary=False))


class UnwrappedJson(EnvelopeJson):
    name = "unwrapped"

    def accepts(self, event: Event) -> bool:
        return event.op != "t"

    def _schema(self, event: Event) -> str:
        key = (event.table.name, event.version)
        text = self._schema_text.get(key)
        if text is None:
            text = self._schema_text[key] = _JSON(json_schema(self.codec(event).unwrapped_schema))
        return text

    def record(self, event: Event) -> str:
        payload = _JSON(self.codec(event).unwrapped(event))
        return f'{{"schema":{self._schema(event)},"payload":{payload}}}'


class AvroContainer(LandingFormat):
    name = "avro"
    extension = "avro"
    tombstone = None

    def __init__(self, decimal_mode: str, sync_interval: int) -> None:
        super().__init__(decimal_mode)
        self.sync_interval = sync_interval
        self._writer_schemas: dict[tuple[str, int], tuple[Any, bytes]] = {}

    def record(self, event: Event) -> dict[str, Any]:
        return self.codec(event).envelope(event, binary=True)

    def remember(self, event: Event) -> None:
        """Keep the writer schema of the event's table version for `render`."""
        key = (event.table.name, event.version)
        if key not in self._writer_schemas:
            envelope = self.codec(event).envelope_schema.as_optional()
            parsed = fastavro.parse_schema(avro_schema(envelope))
            self._writer_schemas[key] = (parsed, avro_schema_text(envelope).encode("utf-8"))

    def schema_id(self, event: Event) -> tuple[str, int]:
        self.remember(event)
        return (event.table.name, event.version)

    def render(self, records: list[Any], schema_id: tuple[str, int] | None, sync: bytes) -> bytes:
        if schema_id is None:
            raise ValueError("an Avro file needs the schema of at least one event")
        parsed, text = self._writer_schemas[schema_id]
        out = io.BytesIO()
        out.write(_AVRO_MAGIC)
        # Java's DataFileWriter keeps metadata in a HashMap: avro.schema, then avro.codec.
        out.write(_long(2))
        for name, value in ((b"avro.schema", text), (b"avro.codec", b"null")):
            out.write(_long(len(name)) + name + _long(len(value)) + value)
        out.write(_long(0))
        out.write(sync)
        block = io.BytesIO()
        count = 0
        for record in records:
            fastavro.schemaless_writer(block, parsed, record)
            count += 1
            if block.tell() >= self.sync_interval:
                _write_block(out, block, count, sync)
                block, count = io.BytesIO(), 0
        if count:
            _write_block(out, block, count, sync)
        return out.getvalue()


def _write_block(out: io.BytesIO, block: io.BytesIO, count: int, sync: bytes) -> None:
    data = block.getvalue()
    out.write(_long(count) + _long(len(data)) + data + sync)


def _long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    encoded = (value << 1) ^ (value >> 63)
    out = bytearray()
    while encoded & ~0x7F:
        out.append((encoded & 0x7F) | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)


def make_format(name: str, decimal_mode: str, sync_interval: int) -> LandingFormat:
    """The format named by `--format`."""
    if name == "json":
        return EnvelopeJson(decimal_mode)
    if name == "json-schemaless":
        return SchemalessJson(decimal_mode)
    if name == "unwrapped":
        return UnwrappedJson(decimal_mode)
    if name == "avro":
        return AvroContainer(decimal_mode, sync_interval)
    raise ValueError(f"unknown format {name!r}")
