"""`lakehouse cdc decode PATH...`: landing files, any format, no table config.

The tool to reach for when a file looks wrong: it runs the ingestion decoder
itself (so what it prints is what `ingest` would apply), takes column types
from the files' own schemas or infers them, tells the connector from each
event's source block, and prints rows and rejects as JSON lines, exactly:

- one object per event, file by file (in path order), in source-position
  order within a file: the source columns, then the `_cdc_*` columns
  (`_cdc_ingested_at` and `_cdc_event_id` left out);
- decimals as JSON numbers with every digit of their scale (`1.1234567890`),
  decimals Spark cannot hold (precision above 38, VariableScaleDecimal) as
  JSON strings of their exact text;
- timestamps as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds), dates as
  `YYYY-MM-DD`, times as `HH:MM:SS.ffffff` (`.fffffffff` for NanoTime),
  bytes as base64, geometry as `{"wkb": base64, "srid": n}`;
- then one object per rejected line: `{"_rejected": reason, "file", "line", "raw"}`.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.decode.events import DecodeSpec, classify, decode, read_lines
from ingestion.errors import UserError
from ingestion.kept import release
from ingestion.sources.landing import to_hadoop_uri

TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'"
HIDDEN_PREFIXES = ("_", ".")
NESTED = (T.StructType, T.ArrayType, T.MapType)
# Printed as they come from Spark: nested values as JSON, decimals as their exact text.
RAW_JSON = (*NESTED, T.DecimalType)


def decode_file(spark: SparkSession, path: str, limit: int | None = None) -> Iterator[str]:
    """JSON lines of one file (or folder): see `decode_paths`."""
    return decode_paths(spark, [path], limit)


def decode_paths(
    spark: SparkSession, paths: Sequence[str], limit: int | None = None
) -> Iterator[str]:
    """JSON lines: every decoded event of every file, then every reject; `limit` per file."""
    files = list_inputs(spark, paths)
    avro = [uri for uri in files if uri.endswith(".avro") or _starts_with_avro_magic(spark, uri)]
    text = [uri for uri in files if uri not in avro]
    lines = classify(read_lines(spark, text, avro))
    decoded = decode(lines, DecodeSpec(connector="any", key=()), ingested_at="1970-01-01")
    events = decoded.events.drop("_cdc_ingested_at", "_cdc_event_id")
    order = Window.partitionBy("_cdc_source_file").orderBy("_cdc_position")
    events = events.withColumn("_rank", F.row_number().over(order))
    if limit is not None:
        events = events.where(F.col("_rank") <= limit)
    events = events.orderBy("_cdc_source_file", "_rank").drop("_rank")
    try:
        yield from _event_lines(events)
        for reject in decoded.rejects.orderBy("source_file", "line").collect():
            yield json.dumps(
                {
                    "_rejected": reject["reason"],
                    "file": reject["source_file"],
                    "line": reject["line"],
                    "raw": reject["raw"],
                }
            )
    finally:
        release(decoded.lines)  # kept by decode(); a rerun must read the files again


def _event_lines(events: DataFrame) -> Iterator[str]:
    names = events.columns
    nested = {f.name for f in events.schema.fields if isinstance(f.dataType, RAW_JSON)}
    for row in _printable(events).toLocalIterator():
        values = [
            _RawJson(v) if name in nested and v is not None else v
            for name, v in zip(names, row, strict=True)
        ]
        yield json_line(names, values)


def list_inputs(spark: SparkSession, paths: Sequence[str]) -> list[str]:
    """Hadoop URIs of the given files and of every visible file under the given folders."""
    jvm = spark._jvm
    found: list[str] = []
    for given in paths:
        local = "://" not in given and not given.startswith("file:")
        uri = to_hadoop_uri(os.path.abspath(given) if local else given)
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
        if not fs.exists(path):
            raise UserError(f"no such file or folder: {given}")
        if fs.getFileStatus(path).isFile():
            found.append(str(fs.makeQualified(path).toUri()))
            continue
        root = str(fs.makeQualified(path).toUri()).rstrip("/")
        listing = fs.listFiles(path, True)
        folder: list[str] = []
        while listing.hasNext():
            file_uri = str(listing.next().getPath().toUri())
            relative = file_uri[len(root) :].strip("/").split("/")
            if not any(part.startswith(HIDDEN_PREFIXES) for part in relative):
                folder.append(file_uri)
        found.extend(sorted(folder))
    if not found:
        raise UserError(f"no files to decode in {', '.join(paths)}")
    return found


def _printable(events: DataFrame) -> DataFrame:
    """Columns whose Python form would lose digits become exact text in Spark first.

    The columns are taken by position, never by name: files whose column names
    differ only in case (`O_CHAR` in one, `o_char` in another) give two columns,
    which Spark's case-insensitive names would find ambiguous.
    """
    fields = events.schema.fields
    positional = events.toDF(*[f"_{index}" for index in range(len(fields))])
    return positional.select(
        *[_printable_column(f"_{index}", f.dataType) for index, f in enumerate(fields)]
    )


def _printable_column(name: str, kind: T.DataType) -> Column:
    """Timestamps, dates, decimals and nested values as exact text; bytes stay bytes.

    Bytes are base64-encoded in Python (`json_value`): Spark's `base64()`
    breaks its output into MIME lines of 76 characters with `\\r\\n` between
    them, unless `spark.sql.chunkBase64String.enabled` is off.
    """
    column = F.col(name)
    if isinstance(kind, T.TimestampType):
        column = F.date_format(column, TIMESTAMP_FORMAT)
    elif isinstance(kind, NESTED):
        column = F.to_json(column)
    elif isinstance(kind, T.DecimalType | T.DateType):  # decimals: every digit
        column = column.cast("string")
    return column.alias(name)


class _RawJson(str):
    """Text already in JSON form: a struct serialised by Spark, a decimal's digits."""


def json_line(names: Sequence[str], values: Sequence[Any]) -> str:
    """One JSON object, decimals written as numbers with all their digits."""
    pairs = zip(names, values, strict=True)
    parts = [f"{json.dumps(name)}:{json_value(value)}" for name, value in pairs]
    return "{" + ",".join(parts) + "}"


def json_value(value: Any) -> str:
    """A collected value as JSON text, exact: Decimal in plain notation, never a float."""
    if isinstance(value, _RawJson):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes | bytearray):
        return json.dumps(base64.b64encode(value).decode("ascii"))
    if isinstance(value, datetime.datetime | datetime.date):
        return json.dumps(value.isoformat())
    return json.dumps(value)


def _starts_with_avro_magic(spark: SparkSession, uri: str) -> bool:
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).open(path)
    try:
        return bytes(stream.read() & 0xFF for _ in range(4)) == b"Obj\x01"
    finally:
        stream.close()
