"""Landing files -> one DataFrame of decoded change events, plus the rejects.

Every format the S3 sink can hold is read into the same line shape (file, line,
raw text, schema), each line is classified by its own shape (format detection
per file and per line, never a flag), and the envelope, unwrapped or Avro
flavours are all normalised to: source columns typed per Debezium's logical
types, plus the `_cdc_*` columns of docs/contracts.md. Lines that cannot be
applied leave with a reason instead of failing the job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.decode.avro import decode_container
from ingestion.decode.logical_types import exact_number_type, timestamp_from_millis, to_column
from ingestion.decode.types import (
    FieldType,
    SchemaError,
    decimal_type,
    incompatibility,
    resolve_columns,
    version_fields,
)
from ingestion.kept import kept
from ingestion.ordering import any_position_column, position_column
from ingestion.unavailable_values import UNAVAILABLE, flag_column

LINE_SCHEMA = "file string, line bigint, raw string, schema string, error string"
ENVELOPE_SCHEMA = (
    "struct<before:string, after:string, source:map<string,string>, op:string, ts_ms:bigint>"
)
VALID_OPS = ("r", "c", "u", "d", "t")
# MongoDB's connector writes a document, not a row: its `after` is the
# document as JSON text (Extended JSON), with no columns to decode.
MONGODB_REASON = (
    "MongoDB connector events are not supported: the field `after` holds the document as "
    "JSON text, not a row of columns (flatten them with Debezium's ExtractNewDocumentState)"
)
# A line's own fields around the row image (JsonConverter's and Debezium's envelopes).
ENVELOPE_FIELDS = ("payload", "before", "after")
# Fields ExtractNewRecordState adds (add.fields=...), mapped to source-block names.
UNWRAPPED_SOURCE_FIELDS = (
    "lsn", "file", "pos", "row", "change_lsn", "commit_lsn", "event_serial_no",
    "db", "schema", "table", "source_ts_ms", "ts_ms", "connector",
)  # fmt: skip
CDC_COLUMNS = (
    "_cdc_op",
    "_cdc_source_ts",
    "_cdc_position",
    "_cdc_source_db",
    "_cdc_source_table",
    "_cdc_is_deleted",
    "_cdc_source_file",
    "_cdc_ingested_at",
)


@dataclass(frozen=True)
class DecodeSpec:
    """What the decoder needs to know about a table; everything else comes from the data."""

    connector: str  # postgresql, mysql, sqlserver, or "any" to tell per event
    key: tuple[str, ...]  # empty: no key check (decoding a file on its own)
    columns: dict[str, FieldType] = field(default_factory=dict)  # declared / bronze types
    # Debezium's unavailable.value.placeholder, looked for in PostgreSQL events only
    # (TOAST; ingestion/unavailable_values.py); None: not looked for.
    placeholder: str | None = None

    @property
    def unavailable_placeholder(self) -> str | None:
        """The placeholder to flag: only the PostgreSQL connector sends it for TOAST."""
        return self.placeholder if self.connector == "postgresql" else None


# The columns `Decoded.rows` holds beside an event's: why the line is rejected
# (null when it is applied), its number in its file, and its text when rejected.
REJECTION = "_rejection"
LINE = "_line"
REJECTED_RAW = "_rejected_raw"


@dataclass
class Decoded:
    """Every decoded line once, the columns that were found, and the classified lines.

    `events` and `rejects` are filters over `rows`, so a caller that keeps
    `rows` (ingestion/kept.py) decodes each line once. Kept apart, each of the
    two decoded every line again, and Spark's optimizer pushed each filter below
    the decoding's projection: every expression of the decoder ran in the
    filter and again after it.
    """

    rows: DataFrame  # events' columns + REJECTION, LINE, REJECTED_RAW; tombstones left out
    columns: dict[str, FieldType]  # final column types, config order then new columns
    lines: DataFrame  # classified lines (kept, ingestion/kept.py), for counting

    @property
    def events(self) -> DataFrame:
        """Source columns + _cdc_* + _cdc_event_id, truncates included."""
        return self.flagged_events.drop(UNAVAILABLE)

    @property
    def flagged_events(self) -> DataFrame:
        """`events` plus UNAVAILABLE: the columns that came as Debezium's placeholder."""
        return self.rows.where(F.col(REJECTION).isNull()).drop(REJECTION, LINE, REJECTED_RAW)

    @property
    def rejects(self) -> DataFrame:
        """raw, source_file, line, reason."""
        return self.rows.where(F.col(REJECTION).isNotNull()).select(
            F.col(REJECTED_RAW).alias("raw"),
            F.col("_cdc_source_file").alias("source_file"),
            F.col(LINE).alias("line"),
            F.col(REJECTION).alias("reason"),
        )


def _line_partitions(spark: SparkSession, text: DataFrame) -> int:
    """How many partitions the lines are numbered in: as many as Spark's scan of the files.

    Numbering lines per file shuffles them by file. Left to
    spark.sql.shuffle.partitions (4 here), a topic of 2 GB at --scale 10 went
    into 600 MiB partitions that the cache could not hold and that kept two
    cores on four long tasks per table; the scan sizes its partitions by
    bytes (spark.sql.files.maxPartitionBytes), so its count grows with the
    batch and a small batch keeps the usual few.
    """
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions"))
    return max(text.rdd.getNumPartitions(), shuffle)


def _not_blank(raw: Column) -> Column:
    """Whether a line has more than spaces (Spark's `trim` removes only spaces).

    A line that starts with another character is told by its first byte; only
    the rest are trimmed and measured. Trimming every line copied it and
    counted its characters: 6% of the executors' time in a --scale 1 snapshot
    (Java Flight Recorder).
    """
    return (raw != "") & (~raw.startswith(" ") | (F.length(F.trim(raw)) > 0))


def read_lines(spark: SparkSession, json_paths: Sequence[str], avro_paths: Sequence[str]):
    """Every landing line or Avro record as (file, line, raw, schema, error)."""
    parts: list[DataFrame] = []
    if json_paths:
        text = (
            spark.read.text(list(json_paths))
            .select(
                F.col("_metadata.file_path").alias("file"),
                F.col("_metadata.file_block_start").alias("block"),
                F.monotonically_increasing_id().alias("id"),
                F.col("value").alias("raw"),
            )
            .where(_not_blank(F.col("raw")))
        )
        text = text.repartition(_line_partitions(spark, text), "file")
        # Line order within a file: split start first, then read order inside a split.
        order = Window.partitionBy("file").orderBy("block", "id")
        parts.append(
            text.select(
                "file",
                (F.row_number().over(order) - 1).cast("bigint").alias("line"),
                "raw",
                F.lit(None).cast("string").alias("schema"),
                F.lit(None).cast("string").alias("error"),
            )
        )
    if avro_paths:
        rdd = spark.sparkContext.binaryFiles(",".join(avro_paths)).flatMap(
            lambda item: decode_container(item[0], item[1])
        )
        parts.append(spark.createDataFrame(rdd, LINE_SCHEMA))
    if not parts:
        return spark.createDataFrame([], LINE_SCHEMA)
    lines = parts[0]
    for part in parts[1:]:
        lines = lines.unionByName(part)
    return lines


def _once(frame: DataFrame, **columns: Column) -> DataFrame:
    """`frame` with `columns` added, each computed once per row for every later use.

    A parse that several expressions of one projection share runs once per
    use: Spark does not share work across the branches of a CASE. Computed
    in a projection of its own and referred to by name, it runs once (the
    optimizer keeps a projection apart when merging it would repeat a costly
    expression). Reading and classifying `listing`'s --scale 1 snapshot
    (192,497 lines) took 12.7 to 14.1 s with every use parsing the line
    again, and 6.0 to 6.2 s with one parse.
    """
    return frame.select("*", *[value.alias(name) for name, value in columns.items()])


def _fields(text: str) -> Column:
    """A JSON object's top-level fields, each value as its JSON text (null if not an object).

    One parse for every use: a schema's text that `batch_schemas` reads again
    from a line must be the very text `classify` hashed into `schema_id`.
    """
    return F.from_json(text, "map<string,string>")


def classify(lines: DataFrame) -> DataFrame:
    """Add `flavour` (envelope, unwrapped, tombstone, bad), `payload`, `has_schema`, `schema_id`.

    The payload is the line itself or, with JsonConverter's schemas, its
    `payload` field; its own keys tell a Debezium envelope (`op`) from an
    ExtractNewRecordState row (`__op` / `__deleted`). A JSON line's schema
    is kept as its hash (`schema_id`) only: its text made a kept TICKIT line
    3.4 KB instead of 2.2 KB. `batch_schemas` reads each version's text from
    its first line.
    """
    # Spark keeps a text line's bytes as read; the JSON reader would replace
    # invalid ones with U+FFFD and apply a silently altered value.
    parsed = _once(
        lines,
        _top=_fields("raw"),
        _not_utf8=F.encode("raw", "UTF-8") != F.col("raw").cast("binary"),
    )
    top, not_utf8 = F.col("_top"), F.col("_not_utf8")
    parsed = _once(parsed, _has_payload=F.array_contains(F.map_keys(top), "payload"))
    has_payload = F.col("_has_payload")
    payload = (
        F.when(F.col("schema").isNotNull(), F.col("raw"))
        .when(has_payload, top["payload"])
        .otherwise(F.col("raw"))
    )
    parsed = _once(parsed, payload=payload)
    parsed = _once(parsed, _keys=F.map_keys(_fields("payload")))
    has = lambda key: F.coalesce(F.array_contains("_keys", key), F.lit(False))  # noqa: E731
    flavour = (
        F.when(F.col("error").isNotNull(), F.lit("bad"))
        .when(not_utf8, F.lit("bad"))
        .when(F.trim("raw") == "null", F.lit("tombstone"))
        .when(top.isNull(), F.lit("bad"))
        .when(has_payload & top["payload"].isNull(), F.lit("tombstone"))
        .when(has("op"), F.lit("envelope"))
        .when(has("__op") | has("__deleted"), F.lit("unwrapped"))
        .otherwise(F.lit("bad"))
    )
    reason = (
        F.when(F.col("error").isNotNull(), F.col("error"))
        .when(not_utf8, F.lit("line is not valid UTF-8"))
        .when(top.isNull(), F.lit("line is not a JSON object"))
        .otherwise(F.lit("not a Debezium event: no op or __op field"))
    )
    schema = F.coalesce(F.col("schema"), top["schema"])
    return parsed.select(
        "file",
        "line",
        "raw",
        flavour.alias("flavour"),
        "payload",
        "schema",
        schema.isNotNull().alias("has_schema"),
        F.xxhash64(schema).alias("schema_id"),
        reason.alias("reason"),
    )


@dataclass(frozen=True)
class SchemaVersion:
    """One distinct Connect schema of the batch: its columns, or why it cannot be read."""

    schema_id: int
    fields: dict[str, FieldType]
    error: str | None = None


@dataclass(frozen=True)
class BatchSchemas:
    """The batch's schema versions in source order, and whether any event has no schema."""

    versions: list[SchemaVersion]
    schemaless: bool


def _schema_text() -> Column:
    """A classified line's schema: the one it was read with (Avro's), else its `schema` field.

    Evaluated by `batch_schemas` for the first line of each version only:
    the lines keep its hash, not the 1.2 KB text of every line's schema.
    """
    return F.coalesce(F.col("schema"), _fields("raw")["schema"])


def batch_schemas(lines: DataFrame, spec: DecodeSpec) -> BatchSchemas:
    """Each distinct envelope schema of the batch (few per topic), by first source position.

    Source order, not collect order, so that which type a column gets when
    the schema changes inside the batch is the same on every run. Finding
    the first position parses every line's source block (3 s for `listing`'s
    --scale 1 snapshot, against 0.5 s for the versions alone), so it is done
    only when there is more than one version to order. The same job tells
    whether any event (schemaless JSON, an unwrapped row) came without a
    schema: only then is a job run to find and type its columns (0.15 to
    0.7 s per table and batch, warm, when every event had its schema).
    """
    event = F.col("flavour").isin("envelope", "unwrapped")
    rows = (
        lines.groupBy((~F.col("has_schema")).alias("no_schema"), "schema_id")
        .agg(F.first(_schema_text()).alias("schema"), F.max(event).alias("events"))
        .collect()
    )
    schemaless = any(r.no_schema and r.events for r in rows)
    rows = [r for r in rows if not r.no_schema]
    if len(rows) > 1:
        first = F.struct(_position(spec, F.col("src")).alias("position"), "file", "line")
        firsts = {
            r.schema_id: r.first
            for r in _with_events(lines.where("has_schema"))
            .groupBy("schema_id")
            .agg(F.min(first).alias("first"))
            .collect()
        }
        rows.sort(key=lambda r: _source_order(firsts[r.schema_id]))
    versions = []
    for row in rows:
        try:
            versions.append(SchemaVersion(row.schema_id, version_fields(row.schema)))
        except SchemaError as error:
            versions.append(SchemaVersion(row.schema_id, {}, str(error)))
    return BatchSchemas(versions, schemaless)


def _source_order(first: Row) -> tuple[str, str, int]:
    return (first.position or "", first.file or "", first.line or 0)


SAMPLE_ROWS = 200


INT64 = range(-(2**63), 2**63)


def infer_type(values: list[Any]) -> FieldType:
    """A column type from sample JSON values, for schemaless rows with no declared type.

    Integers beyond 64 bits (MySQL BIGINT UNSIGNED in precise or long-less
    form) become an exact decimal of as many digits as the widest needs.
    """
    kinds = {type(v) for v in values if v is not None}
    if kinds == {bool}:
        return FieldType("boolean")
    if kinds == {int}:
        if all(v in INT64 for v in values if v is not None):
            return FieldType("int64")
        digits = max(len(str(abs(v))) for v in values if v is not None)
        return decimal_type(max(digits, 20), 0)
    if kinds and kinds <= {int, float}:
        return FieldType("float64")
    return FieldType("string")


def _schemaless_columns(lines: DataFrame, declared: dict[str, FieldType]) -> dict[str, FieldType]:
    """Columns of schemaless / unwrapped rows that nothing declares, typed from a sample."""
    schemaless = _with_events(
        lines.where(F.col("flavour").isin("envelope", "unwrapped") & ~F.col("has_schema"))
    )
    keys = sorted(
        r.k
        for r in schemaless.select(F.explode(F.map_keys("values")).alias("k")).distinct().collect()
        if not r.k.startswith("__") and r.k not in declared
    )
    if not keys:
        return {}
    images = schemaless.select("image").where("image is not null").limit(SAMPLE_ROWS).collect()
    samples = [sample for r in images if isinstance(sample := _json_or_none(r.image), dict)]
    return {key: infer_type([s.get(key) for s in samples]) for key in keys}


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _choose_image(op: Column, row: Column, before: Column, after: Column) -> Column:
    """The row image of an event: `after`, or `before` for a delete; unwrapped rows are it."""
    return F.when(F.col("flavour") == "unwrapped", row).otherwise(
        F.when(op == "d", before).otherwise(after)
    )


def _with_events(lines: DataFrame) -> DataFrame:
    """Classified lines with their events' parts, each line's payload parsed once.

    The parts: `op`, `src` (the source block as a map), `image` (the row's
    JSON) and `values` (the image as a map). An envelope's payload is parsed
    as the envelope; an unwrapped row's as a map, which is its image's values
    too, and its source block is built from that map's `__` fields (looked
    up by name: renaming and filtering every key of every row was 7% of the
    executors' time in a --scale 1 snapshot, and took a column named like a
    source field, `db` say, for it).
    """
    flavour = F.col("flavour")
    unwrapped = flavour == "unwrapped"
    parts = _once(
        lines,
        _envelope=F.when(flavour == "envelope", F.from_json("payload", ENVELOPE_SCHEMA)),
        _row=F.when(flavour != "envelope", _fields("payload")),
    )
    envelope, row = F.col("_envelope"), F.col("_row")
    deleted = F.lower(row["__deleted"]) == "true"
    op = (
        F.when(flavour == "envelope", envelope["op"])
        .when(deleted, F.lit("d"))
        .otherwise(row["__op"])
    )
    source = F.create_map(
        *[part for name in UNWRAPPED_SOURCE_FIELDS for part in (F.lit(name), row[f"__{name}"])]
    )
    image = _choose_image(envelope["op"], F.col("payload"), envelope["before"], envelope["after"])
    parts = _once(
        parts, op=op, src=F.when(unwrapped, source).otherwise(envelope["source"]), image=image
    )
    values = F.when(unwrapped, row).otherwise(_fields("image"))
    return _once(parts, values=values).drop("_envelope", "_row")


def _position(spec: DecodeSpec, source: Column) -> Column:
    if spec.connector == "any":
        return any_position_column(source)
    return position_column(spec.connector, source)


def _columns_and_bad_versions(
    lines: DataFrame, spec: DecodeSpec
) -> tuple[dict[str, FieldType], list[SchemaVersion], dict[int, str]]:
    """The batch's column types, the readable schema versions, and the rejected ones."""
    schemas = batch_schemas(lines, spec)
    versions = schemas.versions
    declared = dict(spec.columns)
    readable = [v for v in versions if v.error is None]
    columns = resolve_columns(declared, [v.fields for v in readable])
    if schemas.schemaless:
        for name, kind in _schemaless_columns(lines, declared).items():
            columns.setdefault(name, kind)
    bad_versions = {v.schema_id: v.error for v in versions if v.error is not None}
    for version in readable:
        if reason := _incompatible(version.fields, columns):
            bad_versions[version.schema_id] = reason
    return columns, readable, bad_versions


def decode(lines: DataFrame, spec: DecodeSpec, ingested_at: str) -> Decoded:
    """Decode classified lines into typed events; return them with the rejects.

    A line that cannot be decoded (bad JSON, unreadable or incompatible
    schema, unknown op, a value its type cannot hold) is rejected with a
    reason naming the cause; every other line of the file is applied.
    """
    lines = kept(lines)
    columns, versions, bad_versions = _columns_and_bad_versions(lines, spec)
    names = {name: f"_value_{index}" for index, name in enumerate(columns)}
    staged = _with_events(lines).select(
        "file", "line", "raw", "flavour", "reason", "schema_id", "op", "src", "image", "values"
    )
    typed = staged.select(
        "*",
        *[
            _typed_column(name, target, versions, bad_versions).alias(names[name])
            for name, target in columns.items()
        ],
    )
    checked = typed.where(F.col("flavour") != "tombstone").withColumn(
        "rejection", _rejection(spec, columns, names, bad_versions)
    )
    rows = _rows(checked, spec, columns, names, ingested_at)
    return Decoded(rows=rows, columns=columns, lines=lines)


def _rejection(
    spec: DecodeSpec,
    columns: dict[str, FieldType],
    names: dict[str, str],
    bad_versions: dict[int, str],
) -> Column:
    """Why a line cannot be applied, or null: the first failing check, in this order."""
    key_missing = F.lit(False)
    for key in spec.key:
        key_missing = key_missing | F.col("values")[key].isNull()
    return (
        F.when(F.col("flavour") == "bad", F.col("reason"))
        .when(
            (F.col("flavour") == "envelope") & (F.col("src")["connector"] == "mongodb"),
            F.lit(MONGODB_REASON),
        )
        .when(
            F.col("schema_id").isin(*bad_versions) if bad_versions else F.lit(False),
            _bad_version_reason(bad_versions),
        )
        .when(F.col("op").isNull() | ~F.col("op").isin(*VALID_OPS), F.concat(
            F.lit("unknown op '"), F.coalesce(F.col("op"), F.lit("null")), F.lit("'")
        ))
        .when(
            F.col("image").isNotNull() & F.col("values").isNull(),
            F.lit("row image (after / before) is not a JSON object"),
        )
        .when(
            (F.col("op") != "t") & (F.col("values").isNull() | key_missing)
            & F.lit(bool(spec.key)),
            F.lit(f"event has no value for key column(s) {', '.join(spec.key)}"),
        )
        .otherwise(_undecodable(columns, names))
    )  # fmt: skip


def _undecodable(columns: dict[str, FieldType], names: dict[str, str]) -> Column:
    """The first column whose value is present but did not decode, as a reason."""
    failures = [
        F.when(
            F.col("values")[name].isNotNull() & F.col(names[name]).isNull(),
            F.concat(
                F.lit(f"column {name}: cannot decode '"),
                F.substring(F.col("values")[name], 1, 80),
                F.lit(f"' as {target.spark_type}"),
            ),
        )
        for name, target in columns.items()
    ]
    return F.coalesce(*failures) if failures else F.lit(None).cast("string")


def _rows(
    checked: DataFrame,
    spec: DecodeSpec,
    columns: dict[str, FieldType],
    names: dict[str, str],
    ingested_at: str,
) -> DataFrame:
    """The checked lines as events (source and `_cdc_*` columns) with why each is rejected.

    And, in UNAVAILABLE, which of the event's columns came as Debezium's
    placeholder (their raw values compared, only for string and bytes columns).
    """
    raw = {name: F.col("values")[name] for name in columns}
    unavailable = flag_column(raw, columns, spec.unavailable_placeholder)
    source_ts = F.coalesce(F.col("src")["ts_ms"], F.col("src")["source_ts_ms"])
    events = checked.select(
        *[F.col(column).alias(name) for name, column in names.items()],
        F.col("op").alias("_cdc_op"),
        timestamp_from_millis(source_ts).alias("_cdc_source_ts"),
        _position(spec, F.col("src")).alias("_cdc_position"),
        F.col("src")["db"].alias("_cdc_source_db"),
        F.concat_ws(".", F.col("src")["schema"], F.col("src")["table"]).alias("_cdc_source_table"),
        (F.col("op") == "d").alias("_cdc_is_deleted"),
        F.col("file").alias("_cdc_source_file"),
        F.lit(ingested_at).cast("timestamp").alias("_cdc_ingested_at"),
        F.col("rejection").alias(REJECTION),
        F.col("line").alias(LINE),
        F.when(F.col("rejection").isNotNull(), F.col("raw")).alias(REJECTED_RAW),
        unavailable.alias(UNAVAILABLE),
    )
    return events.withColumn("_cdc_event_id", event_id(spec.key))


def event_id(key: Sequence[str]) -> Column:
    """An event's id, the changelog's record key: its key, source position and op, hashed.

    The same change delivered twice has the same id, so the changelog keeps it once.
    """
    parts = [F.col(k).cast("string") for k in key]
    return F.sha2(F.concat_ws("|", *parts, "_cdc_position", "_cdc_op"), 256)


# The fix for a change bronze cannot follow: its stored files cannot take the new type.
INCOMPATIBLE_FIX = (
    "bronze cannot follow this change: rebuild the table from a fresh snapshot "
    "with `lakehouse resnapshot <table>`"
)


def _incompatible(version: dict[str, FieldType], columns: dict[str, FieldType]) -> str | None:
    """Why a schema version's lines are quarantined: each column, both types, and the fix."""
    problems = [
        f"{name}: {why}"
        for name, kind in version.items()
        if name in columns and (why := incompatibility(kind, columns[name]))
    ]
    if not problems:
        return None
    return f"incompatible schema change: {'; '.join(problems)}; {INCOMPATIBLE_FIX}"


def _bad_version_reason(bad_versions: dict[int, str]) -> Column:
    expression = F.lit(None).cast("string")
    for version_id, reason in bad_versions.items():
        expression = F.when(F.col("schema_id") == version_id, F.lit(reason)).otherwise(expression)
    return expression


def _is_number(name: str) -> Column:
    """Whether the column's JSON value is a number rather than a string (see decode_decimal)."""
    return F.col("image").rlike(f'"{re.escape(name)}"\\s*:\\s*-?[0-9]')


def _exact_number(name: str, target: FieldType) -> Column | None:
    """A decimal column's JSON number read exactly from the line (see `decode_decimal`).

    The image `_choose_image` picks, at the line's top level or under `payload`,
    parsed by Jackson as a decimal: the `values` map holds the text of a
    number that went through a double. Only lines where the value is a number
    parse (a lazy branch), and a column named like an envelope field keeps
    the text path.
    """
    if target.kind != "decimal" or name in ENVELOPE_FIELDS:
        return None
    number = exact_number_type(target)
    row = T.StructType([T.StructField(name, number)])
    level = T.StructType(
        [T.StructField("after", row), T.StructField("before", row), T.StructField(name, number)]
    )
    parsed = F.from_json("raw", T.StructType([T.StructField("payload", level), *level.fields]))
    images = [
        _choose_image(F.col("op"), node[name], node["before"][name], node["after"][name])
        for node in (parsed["payload"], parsed)
    ]
    return F.when(_is_number(name), F.coalesce(*images))


def _typed_column(
    name: str,
    target: FieldType,
    versions: list[SchemaVersion],
    bad_versions: dict[int, str],
) -> Column:
    """One column, decoded with the encoding of the line's own schema version."""
    raw = F.col("values")[name]
    number = _is_number(name)
    exact = _exact_number(name, target)
    expression = to_column(raw, target, target, number, exact)  # schemaless: declared encoding
    for version in versions:
        incoming = version.fields.get(name)
        if version.schema_id in bad_versions or incoming is None or incoming == target:
            continue
        expression = F.when(
            F.col("schema_id") == version.schema_id, to_column(raw, incoming, target, number, exact)
        ).otherwise(expression)
    return expression
