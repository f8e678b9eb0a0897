"""`lakehouse cdc decode FILE`: one landing file, any format, no table config.

The tool to reach for when a file looks wrong: it runs the ingestion decoder
itself (so what it prints is what `ingest` would apply), takes column types
from the file's own schema or infers them, tells the connector from each
event's source block, and prints rows and rejects as JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from ingestion.decode.events import DecodeSpec, classify, decode, read_lines
from ingestion.sources.landing import to_hadoop_uri


def decode_file(spark: SparkSession, path: str, limit: int | None = None) -> Iterator[str]:
    """JSON lines: every decoded event in source-position order, then every reject."""
    uri = to_hadoop_uri(path)
    is_avro = uri.endswith(".avro") or _starts_with_avro_magic(spark, uri)
    lines = classify(read_lines(spark, [] if is_avro else [uri], [uri] if is_avro else []))
    decoded = decode(lines, DecodeSpec(connector="any", key=()), ingested_at="1970-01-01")
    events = decoded.events.drop("_cdc_ingested_at", "_cdc_event_id").orderBy("_cdc_position")
    if limit is not None:
        events = events.limit(limit)
    as_json = F.to_json(F.struct("*"), {"ignoreNullFields": "false"})
    yield from (row[0] for row in events.select(as_json).toLocalIterator())
    for reject in decoded.rejects.orderBy("line").collect():
        yield json.dumps(
            {"_rejected": reject["reason"], "line": reject["line"], "raw": reject["raw"]}
        )


def _starts_with_avro_magic(spark: SparkSession, uri: str) -> bool:
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).open(path)
    try:
        return bytes(stream.read() & 0xFF for _ in range(4)) == b"Obj\x01"
    finally:
        stream.close()
