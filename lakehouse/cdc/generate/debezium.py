"""Debezium 2.x change events: envelope schemas, source blocks, payloads.

An event value is the envelope `{before, after, source, op, ts_ms,
transaction}` under a Connect schema named after Debezium's topic
(`tickit.ecomm.sale.Envelope`, `...Value`) with the connector's own `source`
struct (`io.debezium.connector.mysql.Source`). The unwrapped variant is what
`ExtractNewRecordState` with `delete.handling.mode=rewrite` makes of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lakehouse.cdc.generate.connect import ConnectField, ConnectSchema, struct
from lakehouse.cdc.generate.encoding import column_encoder, column_schema, row_encoder
from lakehouse.cdc.generate.tickit import Table, columns_of

_STRING = ConnectSchema("string")
_OPT_STRING = ConnectSchema("string", optional=True)
_INT64 = ConnectSchema("int64")
_OPT_INT64 = ConnectSchema("int64", optional=True)
_SNAPSHOT = ConnectSchema(
    "string",
    optional=True,
    name="io.debezium.data.Enum",
    version=1,
    parameters=(("allowed", "true,last,false,incremental"),),
    default="false",
)

_COMMON_SOURCE = (
    ConnectField("version", _STRING),
    ConnectField("connector", _STRING),
    ConnectField("name", _STRING),
    ConnectField("ts_ms", _INT64),
    ConnectField("snapshot", _SNAPSHOT),
    ConnectField("db", _STRING),
    ConnectField("sequence", _OPT_STRING),
)
SOURCE_SCHEMAS: dict[str, ConnectSchema] = {
    "postgresql": struct(
        "io.debezium.connector.postgresql.Source",
        (
            *_COMMON_SOURCE,
            ConnectField("schema", _STRING),
            ConnectField("table", _STRING),
            ConnectField("txId", _OPT_INT64),
            ConnectField("lsn", _OPT_INT64),
            ConnectField("xmin", _OPT_INT64),
        ),
    ),
    "mysql": struct(
        "io.debezium.connector.mysql.Source",
        (
            *_COMMON_SOURCE,
            ConnectField("table", _OPT_STRING),
            ConnectField("server_id", _INT64),
            ConnectField("gtid", _OPT_STRING),
            ConnectField("file", _STRING),
            ConnectField("pos", _INT64),
            ConnectField("row", ConnectSchema("int32")),
            ConnectField("thread", _OPT_INT64),
            ConnectField("query", _OPT_STRING),
        ),
    ),
    "sqlserver": struct(
        "io.debezium.connector.sqlserver.Source",
        (
            *_COMMON_SOURCE,
            ConnectField("schema", _STRING),
            ConnectField("table", _STRING),
            ConnectField("change_lsn", _OPT_STRING),
            ConnectField("commit_lsn", _OPT_STRING),
            ConnectField("event_serial_no", _OPT_INT64),
        ),
    ),
}
TRANSACTION_SCHEMA = struct(
    "event.block",
    (
        ConnectField("id", _STRING),
        ConnectField("total_order", _INT64),
        ConnectField("data_collection_order", _INT64),
    ),
    optional=True,
    version=1,
)

# ExtractNewRecordState `add.fields` per connector. The SMT fails on a field the
# connector's source struct lacks, so each connector lists `op,db,table,schema,
# lsn,source.ts_ms` minus what it lacks, plus its own position fields.
ADD_FIELDS: dict[str, tuple[str, ...]] = {
    "postgresql": ("op", "db", "table", "schema", "lsn", "source.ts_ms"),
    "mysql": ("op", "db", "table", "source.ts_ms", "file", "pos", "row"),
    "sqlserver": (
        "op",
        "db",
        "table",
        "schema",
        "source.ts_ms",
        "change_lsn",
        "commit_lsn",
        "event_serial_no",
    ),
}
DELETED_FIELD = "__deleted"


@dataclass(slots=True)
class Event:
    """One change event as the connector emits it (rows still unencoded)."""

    table: Table
    op: str
    key: int | None
    before: list | None
    after: list | None
    source: dict[str, Any]
    ts_ms: int
    version: int


def add_field_name(reference: str) -> str:
    """`source.ts_ms` -> `__source_ts_ms`, `lsn` -> `__lsn` (the SMT's naming)."""
    return "__" + reference.replace(".", "_")


def _add_field_source(reference: str) -> tuple[str | None, str]:
    """Which struct the SMT reads an added field from (None: the envelope)."""
    if "." in reference:
        parent, name = reference.split(".", 1)
        return parent, name
    if reference in ("op", "ts_ms"):
        return None, reference
    return "source", reference


class TopicCodec:
    """Schemas and row encoders of one table in one schema version."""

    def __init__(self, table: Table, version: int, decimal_mode: str) -> None:
        self.table = table
        self.version = version
        self.decimal_mode = decimal_mode
        self.connector = table.system.connector
        self.columns = columns_of(table, version)
        self.column_names = tuple(column.name for column in self.columns)
        self.encode_json = row_encoder(
            [column_encoder(c, self.connector, decimal_mode, binary=False) for c in self.columns]
        )
        self.encode_avro = row_encoder(
            [column_encoder(c, self.connector, decimal_mode, binary=True) for c in self.columns]
        )
        self.add_fields = tuple(
            (add_field_name(ref), *_add_field_source(ref)) for ref in ADD_FIELDS[self.connector]
        )

    @cached_property
    def value_schema(self) -> ConnectSchema:
        fields = [
            ConnectField(c.name, column_schema(c, self.connector, self.decimal_mode))
            for c in self.columns
        ]
        return struct(f"{self.table.server_topic}.Value", fields, optional=True)

    @cached_property
    def envelope_schema(self) -> ConnectSchema:
        return struct(
            f"{self.table.server_topic}.Envelope",
            (
                ConnectField("before", self.value_schema),
                ConnectField("after", self.value_schema),
                ConnectField("source", SOURCE_SCHEMAS[self.connector]),
                ConnectField("op", _STRING),
                ConnectField("ts_ms", _OPT_INT64),
                ConnectField("transaction", TRANSACTION_SCHEMA),
            ),
            version=1,
        )

    @cached_property
    def unwrapped_schema(self) -> ConnectSchema:
        """The flattened value: row fields, added fields (optional copies), __deleted."""
        added = []
        for new_name, parent, name in self.add_fields:
            holder = (
                self.envelope_schema
                if parent is None
                else self.envelope_schema.field(parent).schema
            )
            original = holder.field(name).schema
            copy = ConnectSchema(
                original.type, True, original.name, original.version, original.parameters
            )
            added.append(ConnectField(new_name, copy))
        added.append(ConnectField(DELETED_FIELD, _OPT_STRING))
        return struct(self.value_schema.name, (*self.value_schema.fields, *added))

    def envelope(self, event: Event, binary: bool) -> dict[str, Any]:
        """The envelope payload; `binary` keeps decimal bytes raw (Avro)."""
        return {
            "before": self._image(event.before, binary),
            "after": self._image(event.after, binary),
            "source": event.source,
            "op": event.op,
            "ts_ms": event.ts_ms,
            "transaction": None,
        }

    def _image(self, row: list | None, binary: bool) -> dict[str, Any] | None:
        if row is None:
            return None
        encode = self.encode_avro if binary else self.encode_json
        return dict(zip(self.column_names, encode(row), strict=True))

    def unwrapped(self, event: Event) -> dict[str, Any] | None:
        """The SMT's output; None when the SMT drops the event (truncates)."""
        if event.op == "t":
            return None
        image = event.before if event.op == "d" else event.after
        value = dict(zip(self.column_names, self.encode_json(image), strict=True))
        for new_name, parent, name in self.add_fields:
            if parent is None:
                value[new_name] = event.op if name == "op" else event.ts_ms
            else:
                value[new_name] = event.source[name]
        value[DELETED_FIELD] = "true" if event.op == "d" else "false"
        return value
