"""Read a generated landing zone back, independently of the generator's writers.

Decodes every format into one shape (topic, partition, offset, op, key, row
in the expected-state representation, source position), replays events in
source-position order the way ingestion must, and checks a Connect schema
against a payload. Tests compare the replay with `_expected/` and assert on
the decoded records.
"""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

FILE_NAME = re.compile(
    r"^topics/(?P<topic>[^/]+)/year=(?P<y>\d{4})/month=(?P<m>\d{2})/day=(?P<d>\d{2})/"
    r"(?P=topic)\+(?P<partition>\d+)\+(?P<offset>\d{10})\.(?P<ext>json|avro)$"
)
TS_NAMES = ("io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp")
INT_RANGES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
DECIMAL = "org.apache.kafka.connect.data.Decimal"


@dataclass
class Record:
    """One landed record; `value` is None for a tombstone."""

    path: str
    topic: str
    partition: int
    offset: int
    day: date
    value: Any
    schema: Any = None
    raw: bytes = b""

    @property
    def tombstone(self) -> bool:
        return self.value is None


@dataclass
class Change:
    """A decoded change: what replay needs."""

    record: Record
    op: str
    key: int | None
    row: dict[str, Any] | None
    position: tuple
    source_ts_ms: int


@dataclass
class Landing:
    root: Path
    manifest: dict[str, Any]
    records: dict[str, list[Record]] = field(default_factory=dict)

    @property
    def format(self) -> str:
        return self.manifest["options"]["format"]

    def expected(self, table: str) -> list[dict[str, Any]]:
        path = self.root / "_expected" / f"{table}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def topic_of(self, table: str) -> str:
        return next(t for t, e in self.manifest["topics"].items() if e["table"] == table)


def parse_path(path: str) -> dict[str, Any]:
    match = FILE_NAME.match(path)
    if not match:
        raise AssertionError(f"not an S3-sink file name: {path}")
    return match.groupdict()


def read_landing(root: Path) -> Landing:
    """All landing files, each topic's records in (partition, offset) order."""
    manifest = json.loads((root / "_manifest.json").read_text())
    landing = Landing(root, manifest)
    for path in sorted(root.glob("topics/*/*/*/*/*")):
        relative = path.relative_to(root).as_posix()
        parts = parse_path(relative)
        day = date(int(parts["y"]), int(parts["m"]), int(parts["d"]))
        start = int(parts["offset"])
        records = list(_read_file(path.read_bytes(), parts["ext"]))
        for i, (value, schema, raw) in enumerate(records):
            landing.records.setdefault(parts["topic"], []).append(
                Record(
                    relative,
                    parts["topic"],
                    int(parts["partition"]),
                    start + i,
                    day,
                    value,
                    schema,
                    raw,
                )
            )
    for records in landing.records.values():
        records.sort(key=lambda r: (r.partition, r.offset))
    return landing


def _read_file(data: bytes, extension: str):
    if extension == "avro":
        reader = fastavro.reader(io.BytesIO(data))
        schema = json.loads(reader.metadata["avro.schema"])
        for value in reader:
            yield value, schema, b""
        return
    assert data.endswith(b"\n"), "JSON landing files end with a newline"
    for line in data[:-1].split(b"\n"):
        yield json.loads(line), None, line


# ---------- decoding


def payload_of(record: Record, fmt: str) -> dict[str, Any] | None:
    """The event value without the JsonConverter envelope."""
    if record.value is None:
        return None
    if fmt in ("json", "unwrapped"):
        assert set(record.value) == {"schema", "payload"}
        return record.value["payload"]
    return record.value


def connect_schema_of(record: Record, fmt: str) -> dict[str, Any] | None:
    if fmt in ("json", "unwrapped") and record.value is not None:
        return record.value["schema"]
    return None


def canonical(value: Any, kind: str, decimal_mode: str, connector: str) -> Any:
    """A landed column value in the `_expected` representation."""
    if value is None:
        return None
    if kind == "date":
        return (date(1970, 1, 1) + timedelta(days=value)).isoformat()
    if kind == "timestamp":
        seconds = value / 1000 if connector == "mysql" else value / 1_000_000
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    if kind == "decimal":
        if isinstance(value, Decimal):
            return str(value.quantize(Decimal("0.01")))
        if decimal_mode == "double":
            return f"{value:.2f}"
        if decimal_mode == "string":
            return value
        unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
        return str(Decimal(unscaled).scaleb(-2))
    return value


def decode(landing: Landing, topic: str) -> list[Change]:
    """Every non-tombstone record of a topic as a Change (unwrapped or enveloped)."""
    from lakehouse.cdc.generate.tickit import TABLES, columns_of

    entry = landing.manifest["topics"][topic]
    table = TABLES[entry["table"]]
    connector = entry["connector"]
    mode = landing.manifest["options"]["decimal_handling_mode"]
    kinds = {c.name: c.kind for c in columns_of(table, 2)}
    changes = []
    for record in landing.records.get(topic, []):
        payload = payload_of(record, landing.format)
        if payload is None:
            continue
        if landing.format == "unwrapped":
            image = {k: v for k, v in payload.items() if not k.startswith("__")}
            op = payload["__op"]
            source = {k[2:]: v for k, v in payload.items() if k.startswith("__")}
            ts = payload["__source_ts_ms"]
        else:
            op = payload["op"]
            image = payload["before"] if op == "d" else payload["after"]
            source = payload["source"]
            ts = source["ts_ms"]
        row = None
        if image is not None:
            row = {k: canonical(v, kinds[k], mode, connector) for k, v in image.items()}
        key = None if row is None else row[table.key]
        changes.append(Change(record, op, key, row, position_of(connector, source), ts))
    return changes


def position_of(connector: str, source: dict[str, Any]) -> tuple:
    """The commit-order position of an event from its source fields."""
    if connector == "postgresql":
        return (source["lsn"],)
    if connector == "mysql":
        return (source["file"], source["pos"], source["row"])
    return (source["commit_lsn"], source["change_lsn"] or "", source["event_serial_no"] or 0)


def replay(changes: list[Change], columns: list[str]) -> list[dict[str, Any]]:
    """The final state by source position: last event per key wins; truncates delete all."""
    state: dict[int, dict[str, Any]] = {}
    for change in sorted(changes, key=lambda c: c.position):
        if change.op == "t":
            for row in state.values():
                row["_deleted"] = True
            continue
        row = {name: change.row.get(name) for name in columns}
        row["_deleted"] = change.op == "d"
        state[change.key] = row
    return [state[key] for key in sorted(state)]


# ---------- schema checking


def check_value(schema: dict[str, Any], value: Any, where: str = "$") -> None:
    """Assert that a JsonConverter value matches its Connect schema exactly."""
    if value is None:
        assert schema["optional"], f"{where}: null in a required {schema['type']}"
        return
    kind = schema["type"]
    if kind == "struct":
        names = [f["field"] for f in schema["fields"]]
        assert isinstance(value, dict), f"{where}: struct expects an object"
        assert list(value) == names, f"{where}: fields {list(value)} != schema {names}"
        for member in schema["fields"]:
            check_value(member, value[member["field"]], f"{where}.{member['field']}")
    elif kind in INT_RANGES:
        bits = INT_RANGES[kind]
        assert type(value) is int, f"{where}: {kind} expects an integer, got {value!r}"
        assert -(2 ** (bits - 1)) <= value < 2 ** (bits - 1), f"{where}: {value} overflows {kind}"
    elif kind == "boolean":
        assert type(value) is bool, f"{where}: boolean expects true/false, got {value!r}"
    elif kind == "string":
        assert isinstance(value, str), f"{where}: string expects text, got {value!r}"
        if schema.get("name") == "io.debezium.data.Enum":
            assert value in schema["parameters"]["allowed"].split(","), f"{where}: {value!r}"
    elif kind == "float64":
        assert isinstance(value, float), f"{where}: float64 expects a number, got {value!r}"
    elif kind == "bytes":
        decoded = base64.b64decode(value, validate=True)
        if schema.get("name") == DECIMAL:
            params = schema["parameters"]
            precision = int(params["connect.decimal.precision"])
            unscaled = int.from_bytes(decoded, "big", signed=True)
            assert len(str(abs(unscaled))) <= precision, f"{where}: {unscaled} > precision"
    else:
        raise AssertionError(f"{where}: unexpected schema type {kind}")
    if schema.get("name") in TS_NAMES or schema.get("name") == "io.debezium.time.Date":
        assert schema.get("version") == 1, f"{where}: logical type without version"
