"""Dates and timestamps of any year, exact through ingest, Hudi's readers and the Thrift server.

Spark's Parquet and Avro writers refuse dates before 1582-10-15 and
timestamps before 1900 unless told which calendar they are in; the project
says proleptic Gregorian everywhere (ingestion/spark.py, EXACT_DATETIMES).
Debezium's io.debezium.time.Date (days since the epoch) and MicroTimestamp
(microseconds) are proleptic Gregorian too, so every value must read back
as the very day and microsecond the event holds: in bronze (a first write,
then updates through Hudi's merge: base files rewritten on copy-on-write,
log files on merge-on-read), in the changelog, and over JDBC.
"""

from __future__ import annotations

import dataclasses
import datetime
import shlex
from pathlib import Path

import pytest

from ingestion.config import load_tables
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import settings
from lakehouse import dbt_wrapper, stack

from .bronze import run_ingest, settings_for
from .debezium_events import dumps, envelope, field
from .test_ingest_faults import write_lines

EPOCH = datetime.datetime(1970, 1, 1)
# Each row's date and timestamp as text; 1582-10-10 exists in the proleptic
# Gregorian calendar only (the hybrid Julian one skips 1582-10-05..14).
VALUES = (
    ("0001-01-01", "0001-01-01 00:00:00.000000"),
    ("9999-12-31", "9999-12-31 23:59:59.999999"),
    ("1969-12-31", "1969-12-31 23:59:59.999999"),
    ("1000-06-15", "1000-06-15 12:34:56.000000"),
    ("1582-10-10", "1582-10-10 01:02:03.000004"),
    ("1899-12-31", "1899-12-31 23:59:59.999999"),
)
FIELDS = [
    field("id", "int32"),
    field("d", "int32", "io.debezium.time.Date"),
    field("ts", "int64", "io.debezium.time.MicroTimestamp"),
]
EXACT = (
    "id, cast(d as string) as d, date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSSSSS') as ts,"
    " unix_date(d) as days, unix_micros(ts) as micros"
)


def encoded(value: tuple[str, str]) -> tuple[int, int]:
    """Debezium's encoding of (date, timestamp): days and microseconds since the epoch."""
    day, moment = value
    days = (datetime.date.fromisoformat(day) - EPOCH.date()).days
    micros = (datetime.datetime.fromisoformat(moment) - EPOCH) // datetime.timedelta(microseconds=1)
    return days, micros


def test_the_encoding_is_debeziums() -> None:
    assert encoded(VALUES[0]) == (-719162, -62135596800000000)
    assert encoded(VALUES[2]) == (-1, -1)


CORRECTED = {
    f"spark.sql.{form}.{mode}Rebase{setting}": "CORRECTED"
    for form, mode in (("parquet", "datetime"), ("parquet", "int96"), ("avro", "datetime"))
    for setting in ("ModeInWrite", "ModeInRead")
}


def submitted_conf(args: list[str]) -> dict[str, str]:
    """The `--conf key=value` pairs of a spark-submit command line."""
    pairs = [args[i + 1] for i, arg in enumerate(args) if arg == "--conf"]
    return dict(pair.split("=", 1) for pair in pairs)


def test_the_thrift_server_and_dbt_session_write_and_read_exact_datetimes() -> None:
    conf = settings()
    thrift = submitted_conf(stack._thrift_command(conf))
    session = submitted_conf(shlex.split(dbt_wrapper.pyspark_submit_args(conf)))
    assert len(CORRECTED) == 6
    for name, value in CORRECTED.items():
        assert (thrift.get(name), session.get(name)) == (value, value), name


def events(version: int, op: str) -> list[str]:
    """One event per row: version 0 gives row i VALUES[i], version 1 the next row's."""
    out = []
    for row in range(len(VALUES)):
        days, micros = encoded(VALUES[(row + version) % len(VALUES)])
        after = {"id": row, "d": days, "ts": micros}
        out.append(dumps(envelope(FIELDS, after, 1000 * (version + 1) + row, op)))
    return out


def wanted(version: int) -> set[tuple]:
    """The rows of a version as EXACT selects them."""
    rows = set()
    for row in range(len(VALUES)):
        value = VALUES[(row + version) % len(VALUES)]
        rows.add((row, *value, *encoded(value)))
    return rows


def exact(spark, conf, database: str, table: str) -> set[tuple]:
    """A Hudi table's rows as EXACT selects them, read by Spark's Hudi datasource."""
    frame = spark.read.format("hudi").load(to_hadoop_uri(table_path(conf, database, table)))
    frame.createOrReplaceTempView("ancient")
    return {tuple(r) for r in spark.sql(f"select {EXACT} from ancient").collect()}


@pytest.fixture(scope="module", params=["cow", "mor"])
def ingested(request, spark, tmp_path_factory):
    """Two ingests of a table of ancient values: creates, then updates to other values."""
    folder: Path = tmp_path_factory.mktemp(f"ancient-{request.param}")
    database = f"ancient_{request.param}"
    landing = folder / "landing"
    table = dataclasses.replace(
        load_tables(database=database)["category"],
        name="moments", topic="shop.public.moments", key=("id",), columns={},
        table_type=request.param,
    )  # fmt: skip
    conf = settings_for(landing, folder / "lake")
    results = []
    for version, op in ((0, "c"), (1, "u")):
        write_lines(landing, table.topic, version * 100, events(version, op))
        results.append(run_ingest(spark, conf, [table])["moments"])
    return conf, database, results


def test_every_value_is_ingested_and_none_quarantined(ingested) -> None:
    _, _, results = ingested
    assert [(r.committed, r.quarantined) for r in results] == [(True, 0), (True, 0)]


def test_bronze_reads_back_every_day_and_microsecond(ingested, spark) -> None:
    conf, database, _ = ingested
    assert exact(spark, conf, database, "moments") == wanted(1)


def test_the_changelog_keeps_both_versions_exactly(ingested, spark) -> None:
    conf, database, _ = ingested
    assert exact(spark, conf, database, "moments_changelog") == wanted(0) | wanted(1)


def test_the_thrift_server_returns_the_exact_values(ingested) -> None:
    _, database, _ = ingested
    rows = stack.query(f"select {EXACT} from {database}.moments")
    assert {tuple(r) for r in rows} == wanted(1)
