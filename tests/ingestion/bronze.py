"""Helpers for ingestion tests: run an ingest in-process and compare with `_expected/`."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingestion.config import TableConfig, load_tables
from ingestion.engine import ingest
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.results import TableResult
from ingestion.settings import Settings, load_settings
from lakehouse import stack
from lakehouse.cdc.generate import GenerateOptions, generate

TABLES = ("category", "event", "venue", "date", "listing", "sales", "users")


def make_landing(out: Path, **options: Any) -> Path:
    """Generate TICKIT CDC (scale 0.01 unless told) into `out`."""
    generate(GenerateOptions(out=str(out), **{"scale": 0.01, **options}))
    return out


def settings_for(landing: Path, lake: Path) -> Settings:
    return load_settings({"landing": str(landing), "lake": str(lake)})


def tables_for(database: str, names: tuple[str, ...] = TABLES, **changes: Any) -> list[TableConfig]:
    """The project's table config, in another database, optionally with changed fields."""
    tables = load_tables(database=database)
    return [dataclasses.replace(tables[name], **changes) for name in names]


def run_ingest(spark, conf: Settings, tables: list[TableConfig]) -> dict[str, TableResult]:
    return {r.table: r for r in ingest(spark, conf, tables, log=lambda _: None).tables}


def expected(landing: Path, table: str) -> list[dict]:
    path = landing / "_expected" / f"{table}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def normalise(value: Any) -> Any:
    """A value from Spark or PyHive in the expected files' JSON form."""
    if isinstance(value, datetime.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S.%f")
        return text.rstrip("0").rstrip(".")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def _expected_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] == " ":
        return value.rstrip("0").rstrip(".") if "." in value else value
    return value


def differences(rows: list[dict], wanted: list[dict], key: str) -> list[str]:
    """Every way the bronze rows differ from the expected final state (empty if none)."""
    found = {row[key]: row for row in rows}
    problems = []
    if len(found) != len(rows):
        problems.append(f"{len(rows) - len(found)} duplicate keys")
    for want in wanted:
        got = found.pop(want[key], None)
        if got is None:
            problems.append(f"missing key {want[key]}")
            continue
        for column, value in want.items():
            actual = got.get("_cdc_is_deleted") if column == "_deleted" else got.get(column)
            if _expected_value(value) != normalise(actual):
                problems.append(f"{key}={want[key]} {column}: want {value!r}, got {actual!r}")
    problems.extend(f"unexpected key {k}" for k in found)
    return problems


def spark_rows(spark, conf: Settings, database: str, table: str) -> list[dict]:
    frame = spark.read.format("hudi").load(to_hadoop_uri(table_path(conf, database, table)))
    return [row.asDict() for row in frame.collect()]


def thrift_rows(database: str, table: str, columns: list[str]) -> list[dict]:
    select = ", ".join(f"`{c}`" for c in columns)
    return [
        dict(zip(columns, row, strict=True))
        for row in stack.query(f"select {select} from {database}.`{table}`")
    ]


def key_of(table: str) -> str:
    return load_tables()[table].key[0]


def footers(spark, path: Path) -> Iterator:
    """The footer (Parquet's `ParquetMetadata`) of every Parquet file under `path`, or of
    the file `path`."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    for file in path.glob("*.parquet") if path.is_dir() else [path]:
        yield jvm.org.apache.parquet.hadoop.ParquetFileReader.readFooter(
            conf, jvm.org.apache.hadoop.fs.Path(file.as_uri())
        )


BLOOM_FILTER = "org.apache.hudi.bloomfilter"  # Hudi's footer key for a file's key filter


def footer_keys(spark, path: Path) -> set[str]:
    """The key-value metadata keys of the footers of `path`'s Parquet files (`footers`)."""
    return {
        key
        for footer in footers(spark, path)
        for key in footer.getFileMetaData().getKeyValueMetaData().keySet()
    }
