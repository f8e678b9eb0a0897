"""The unwrapped JSON rows of one table, described for the peers: Avro, SQL, Spark.

HoodieStreamer needs a file-based Avro schema of what it reads (the landing
lines are JsonConverter `{"schema":..., "payload":...}`, so the record is
`payload`), a SQL transform to bronze columns and types (the same ordering
position as ours, see `ingestion.ordering`), and an Avro schema of the result.
The plain-Spark ceiling reads the same lines with the equivalent Spark schema.
Everything derives from conf/tables.yml, as ours does.
"""

from __future__ import annotations

import json

from ingestion.config import TableConfig
from ingestion.decode.types import FieldType
from ingestion.ordering import ZERO_LSN

# The fields ExtractNewRecordState adds per connector (`add.fields`), with their JSON types.
META_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "postgresql": (("__lsn", "long"),),
    "mysql": (("__file", "string"), ("__pos", "long"), ("__row", "int")),
    "sqlserver": (
        ("__change_lsn", "string"),
        ("__commit_lsn", "string"),
        ("__event_serial_no", "long"),
    ),
}
COMMON_META = (("__op", "string"), ("__source_ts_ms", "long"), ("__deleted", "string"))

# How each column kind is written in the unwrapped JSON (precise decimals: base64 text).
JSON_AVRO_TYPES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "date": "int",
    "timestamp_ms": "long",
    "timestamp_us": "long",
    "timestamp_ns": "long",
    "timestamp_tz": "string",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "string",
    "decimal": "string",
}
SPARK_JSON_TYPES = {
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
}


def raw_fields(table: TableConfig) -> list[tuple[str, str]]:
    """(name, Avro primitive) of every field of the table's unwrapped rows."""
    columns = [(name, JSON_AVRO_TYPES[kind.kind]) for name, kind in table.columns.items()]
    return [*columns, *META_FIELDS[table.source.connector], *COMMON_META]


def _nullable(kind: object) -> dict:
    return {"type": ["null", kind], "default": None}


def source_schema(table: TableConfig) -> dict:
    """Avro schema of a landing line as JsonDFSSource parses it: only `payload` matters."""
    payload = {
        "type": "record",
        "name": f"{table.name}_payload",
        "fields": [{"name": name, **_nullable(kind)} for name, kind in raw_fields(table)],
    }
    return {
        "type": "record",
        "name": f"{table.name}_line",
        "namespace": "tickit.bench",
        "fields": [{"name": "payload", **_nullable(payload)}],
    }


def _bronze_avro(kind: FieldType) -> object:
    if kind.kind == "decimal":
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": kind.precision,
            "scale": kind.scale,
        }
    if kind.kind == "date":
        return {"type": "int", "logicalType": "date"}
    if kind.kind.startswith("timestamp"):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if kind.kind in ("int8", "int16", "int32"):
        return "int"  # bronze keeps narrow integers as int, as ours does
    return {"int64": "long", "float32": "float", "float64": "double", "bytes": "bytes"}.get(
        kind.kind, kind.kind
    )


CDC_TARGET_FIELDS = (
    ("_cdc_op", "string"),
    ("_cdc_source_ts", {"type": "long", "logicalType": "timestamp-micros"}),
    ("_cdc_position", "string"),
    ("_cdc_is_deleted", "boolean"),
)


def target_schema(table: TableConfig) -> dict:
    """Avro schema of the transformed rows written to the peer's Hudi table."""
    fields = [(name, _bronze_avro(kind)) for name, kind in table.columns.items()]
    return {
        "type": "record",
        "name": f"{table.name}_record",
        "namespace": "tickit.bench",
        "fields": [
            {"name": name, **_nullable(kind)} for name, kind in [*fields, *CDC_TARGET_FIELDS]
        ],
    }


def _lpad(expression: str, width: int) -> str:
    return f"lpad(coalesce(cast({expression} as string), ''), {width}, '0')"


def position_sql(connector: str) -> str:
    """`ingestion.ordering.position_column` in SQL over the unwrapped `__` fields."""
    if connector == "postgresql":
        return _lpad("__lsn", 20)
    if connector == "mysql":
        binlog = "regexp_extract(coalesce(__file, ''), '(\\\\d+)$', 1)"
        return f"concat_ws(':', {_lpad(binlog, 10)}, {_lpad('__pos', 20)}, {_lpad('__row', 10)})"
    if connector == "sqlserver":
        return (
            f"concat_ws(':', lower(coalesce(__commit_lsn, '{ZERO_LSN}')), "
            f"lower(coalesce(__change_lsn, '{ZERO_LSN}')), {_lpad('__event_serial_no', 10)})"
        )
    raise ValueError(f"unknown connector '{connector}'")


def _decimal_sql(column: str, kind: FieldType) -> str:
    """Base64 big-endian two's complement (Connect Decimal) -> decimal(p, s)."""
    raw = f"unbase64({column})"
    unsigned = f"cast(conv(hex({raw}), 16, 10) as decimal(38, 0))"
    negative = f"conv(substr(hex({raw}), 1, 2), 16, 10) >= 128"
    signed = f"if({negative}, {unsigned} - pow(2, 8 * length({raw})), {unsigned})"
    return f"cast({signed} / pow(10, {kind.scale}) as decimal({kind.precision}, {kind.scale}))"


def _column_sql(name: str, kind: FieldType) -> str:
    column = f"`{name}`"
    converted = {
        "decimal": lambda: _decimal_sql(column, kind),
        "date": lambda: f"date_add(date '1970-01-01', {column})",
        "timestamp_ms": lambda: f"timestamp_millis({column})",
        "timestamp_us": lambda: f"timestamp_micros({column})",
        "timestamp_ns": lambda: f"timestamp_micros(cast({column} / 1000 as bigint))",
        "timestamp_tz": lambda: f"cast({column} as timestamp)",
    }.get(kind.kind)
    if converted is not None:
        return f"{converted()} as {column}"
    if kind.kind in ("int8", "int16", "int32"):
        return f"cast({column} as int) as {column}"
    return column


def transform_sql(table: TableConfig) -> str:
    """SqlQueryBasedTransformer query: landing line -> bronze columns (`<SRC>` is Hudi's)."""
    columns = [_column_sql(name, kind) for name, kind in table.columns.items()]
    cdc = [
        "__op as _cdc_op",
        "timestamp_millis(__source_ts_ms) as _cdc_source_ts",
        f"{position_sql(table.source.connector)} as _cdc_position",
        "lower(coalesce(__deleted, 'false')) = 'true' as _cdc_is_deleted",
    ]
    inner = "select payload.* from <SRC> where payload is not null"
    return f"select {', '.join([*columns, *cdc])} from ({inner})"


def spark_json_schema(table: TableConfig) -> str:
    """DDL of a landing line for spark.read.json: `payload` with the raw field types."""
    fields = ", ".join(f"`{name}`: {SPARK_JSON_TYPES[kind]}" for name, kind in raw_fields(table))
    return f"payload struct<{fields}>"


def schema_text(schema: dict) -> str:
    return json.dumps(schema, indent=2)
