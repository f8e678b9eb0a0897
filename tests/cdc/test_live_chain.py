"""The live CDC chain end to end: real PostgreSQL and MariaDB, Debezium, Kafka, Spark, Hudi.

One chain per test run (the session fixture of tests/cdc/conftest.py): `cdc up`
on free ports, `cdc load` at a tiny scale, a workload of inserts, updates,
deletes, an added column and a truncate in both databases, then ingestion from
Kafka. Each bronze table must equal what the source database itself holds,
read over SQL.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

from ingestion.config import load_tables
from ingestion.engine import ingest
from ingestion.hudi_timeline import timeline_folder
from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri
from ingestion.settings import settings
from ingestion.sources.kafka import KafkaSource, framing
from lakehouse import stack
from lakehouse.cdc import chain, connectors, markers, sql
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.cdc.generate.tickit import TABLES
from lakehouse.cdc.load import connect
from lakehouse.cdc.workload import WorkloadOptions, run_workload
from lakehouse.reconcile import reconcile
from tests.cdc.live import DATABASE, SCALE, SEED, Live, alive, publish_and_ingest
from tests.dbt.test_marts import dbt
from tests.platform.sockets import listeners

SNAPSHOT_DATABASE = "it_live_snapshot"  # ecomm.date through a second, snapshotting connector
SNAPSHOT_CONNECTOR = "it-ecomm-date-snapshot"
# Spark types of the source databases' column types, as bronze must hold them
# (smallint as int: Hudi merges through Avro, which has no 16-bit integer; see
# ingestion/decode/types.py).
SPARK_TYPES = {
    "smallint": "int",
    "integer": "int",
    "int": "int",
    "numeric": "decimal(8,2)",
    "decimal": "decimal(8,2)",
    "timestamp without time zone": "timestamp",
    "datetime": "timestamp",
    "date": "date",
    "character varying": "string",
    "varchar": "string",
    "character": "string",
    "char": "string",
    "boolean": "boolean",
    "tinyint": "boolean",  # MariaDB's BOOLEAN; Debezium reads the DDL's BOOLEAN
}


def database_rows(table_name: str) -> tuple[list[str], dict[str, str], dict[Any, tuple]]:
    """The source database's own current rows: columns, their types, rows by key."""
    table = TABLES[table_name]
    dialect = sql.dialect_of(table)
    with closing(connect(settings(), table)) as connection, connection.cursor() as cursor:
        cursor.execute(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = %s and table_name = %s order by ordinal_position",
            (dialect.prefix, table.source_table),
        )
        types = {str(name): str(kind).lower() for name, kind in cursor.fetchall()}
        columns = list(types)
        cursor.execute(sql.select_all(dialect, table, columns))
        rows = {row[0]: tuple(_plain(v) for v in row) for row in cursor.fetchall()}
        connection.commit()
    return columns, types, rows


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, decimal.Decimal):
        return value.quantize(decimal.Decimal("0.01"))
    return value


def bronze(spark, table: str, database: str = DATABASE):
    path = to_hadoop_uri(table_path(settings(), database, table))
    return spark.read.format("hudi").load(path)


def quarantine_reasons(spark, database: str = DATABASE) -> Counter[tuple[str, str]]:
    """(table, reason) -> rows of the database's quarantine: what a failed assertion shows."""
    path = Path(table_path(settings(), database, QUARANTINE))
    if not path.exists():
        return Counter()
    rows = bronze(spark, QUARANTINE, database).select("table_name", "reason").collect()
    return Counter((row.table_name, row.reason) for row in rows)


def bronze_rows(
    spark, table: str, columns: list[str], deleted: bool, database: str = DATABASE
) -> dict[Any, tuple]:
    frame = bronze(spark, table, database).where(f"_cdc_is_deleted = {str(deleted).lower()}")
    rows = {}
    for row in frame.select(*columns).collect():
        values = tuple(_plain(v) for v in row)
        assert values[0] not in rows, f"{table}: key {values[0]} twice in bronze"
        rows[values[0]] = values
    return rows


def _boolean_columns(types: dict[str, str], rows: dict[Any, tuple]) -> dict[Any, tuple]:
    """MariaDB answers BOOLEAN columns as 0/1."""
    flags = [i for i, kind in enumerate(types.values()) if kind == "tinyint"]
    return {
        k: tuple(bool(v) if i in flags and v is not None else v for i, v in enumerate(row))
        for k, row in rows.items()
    }


def assert_bronze_equals_database(spark, live: Live) -> None:
    for table in live.tables:
        columns, types, rows = database_rows(table.name)
        rows = _boolean_columns(types, rows)
        got = bronze_rows(spark, table.name, columns, deleted=False)
        missing = sorted(set(rows) - set(got))[:5]
        extra = sorted(set(got) - set(rows))[:5]
        assert not missing and not extra, f"{table.name}: missing {missing}, extra {extra}"
        wrong = [(rows[k], got[k]) for k in rows if rows[k] != got[k]][:3]
        assert not wrong, f"{table.name}: database vs bronze {wrong}"
        schema = {f.name: f.dataType.simpleString() for f in bronze(spark, table.name).schema}
        for column, kind in types.items():
            assert schema[column] == SPARK_TYPES[kind], f"{table.name}.{column}: {schema[column]}"
        # A key deleted and later taken by a new row (a workload numbers new rows
        # after the current highest key) is in the database again, not deleted.
        deleted = set().union(*(w.deleted.get(table.name, set()) for w in live.workloads))
        deleted -= set(rows)
        assert set(bronze_rows(spark, table.name, columns[:1], deleted=True)) == deleted


def test_bronze_equals_the_source_databases(spark, live_chain: Live) -> None:
    """Acceptance 1: values, types and soft-deleted keys, after every kind of change."""
    workload = live_chain.workloads[0]
    assert workload.changes.get("delete", 0) > 0 and workload.changes.get("update", 0) > 0
    assert len(workload.schema_changes) == 2 and len(workload.truncates) == 2
    assert live_chain.runs[0].quarantined == 0, quarantine_reasons(spark)
    assert_bronze_equals_database(spark, live_chain)
    _, types, _ = database_rows("listing")
    assert "channel" in types  # the added column reached bronze (checked above with the rest)


def test_reconcile_finds_each_live_table_equal_to_its_database(spark, live_chain: Live) -> None:
    """`lakehouse reconcile`'s hashed comparison agrees, on every type the chain's tables send."""
    conf = dataclasses.replace(settings(), bronze_database=DATABASE)
    said: list[str] = []
    result = reconcile(spark, conf, [t.name for t in live_chain.tables], said.append)
    assert result.differing == [], said
    for compared in result.tables:
        _, _, rows = database_rows(compared.table)
        assert (compared.equal, compared.not_compared) == (True, ()), said
        assert compared.source_rows == compared.bronze_rows == len(rows), said


def test_nothing_new_commits_nothing_then_only_new_changes(spark, live_chain: Live) -> None:
    """Acceptance 3: a run with nothing new commits nothing; the next applies only the new."""
    commits = {t.name: _commit_count(spark, t.name) for t in live_chain.tables}
    idle = publish_and_ingest(spark, live_chain)
    assert [r.table for r in idle.tables if r.committed] == []
    assert {t.name: _commit_count(spark, t.name) for t in live_chain.tables} == commits

    conf = settings()
    live_chain.workloads.append(
        run_workload(WorkloadOptions(transactions=30, seed=11), conf, lambda _: None)
    )
    run = publish_and_ingest(spark, live_chain)
    assert 0 < run.events < 2_000  # the new changes (and the truncate's re-load), not a replay
    assert_bronze_equals_database(spark, live_chain)
    for table in live_chain.tables:
        changelog = bronze(spark, table.changelog_name)
        assert changelog.count() == changelog.select("_cdc_event_id").distinct().count()


def _wait_for_records(spark, topic: str, count: int) -> None:
    """Poll the topic's offsets until it holds `count` records (a snapshot's reads)."""
    conf = settings()
    source = KafkaSource(spark, conf.kafka_servers, topic, conf.kafka_options)
    deadline = time.monotonic() + 120
    while (held := sum(end - start for start, end in source.bounds().values())) < count:
        assert time.monotonic() < deadline, f"{topic}: {held} of {count} records in 120 s"
        time.sleep(0.5)


def test_a_snapshot_of_a_loaded_mariadb_table_keeps_its_booleans(spark, live_chain: Live) -> None:
    """A connector that snapshots ecomm.date, already loaded, gives bronze the same booleans.

    A snapshot reads the table's DDL from SHOW CREATE TABLE, where MariaDB's
    BOOLEAN is tinyint(1): without the connector's TinyIntOneToBooleanConverter
    Debezium emits 16-bit integers and every date event is quarantined. A CI
    run hit it when the chain's own snapshot overlapped `cdc load`.
    """
    conf = settings()
    prefix = "it_snapshot"
    config = connectors.connector_configs(conf)["tickit-ecomm"] | {
        "topic.prefix": prefix,
        "database.server.id": "5499",
        "table.include.list": "ecomm.date",
        "schema.history.internal.kafka.topic": f"lakehouse-cdc-schema-history.{prefix}",
    }
    date = next(t for t in live_chain.tables if t.name == "date")
    table = dataclasses.replace(date, database=SNAPSHOT_DATABASE, topic=f"{prefix}.ecomm.date")
    columns, types, rows = database_rows("date")
    connectors.register(conf, SNAPSHOT_CONNECTOR, config)
    try:
        _wait_for_records(spark, table.topic, len(rows))
    finally:
        connectors.remove(conf, SNAPSHOT_CONNECTOR)
    run = ingest(spark, conf, [table], log=_quiet)
    assert run.quarantined == 0, quarantine_reasons(spark, SNAPSHOT_DATABASE)
    got = bronze_rows(spark, "date", columns, deleted=False, database=SNAPSHOT_DATABASE)
    assert got == _boolean_columns(types, rows)
    assert any(row[columns.index("holiday")] for row in got.values())  # not all False


def test_chain_listens_on_loopback_only(live_chain: Live) -> None:
    """Acceptance 4 (the other half, no process left, is checked when the fixture ends)."""
    conf = settings()
    pids = [stack.running_pid(s, conf) for s in chain.services(conf)]
    assert all(pids), pids
    found = listeners(pid for pid in pids if pid)
    ports = {conf.cdc_postgres_port, conf.cdc_mariadb_port, conf.cdc_kafka_port}
    assert ports | {conf.cdc_connect_port} <= {listener.port for listener in found}
    assert [listener for listener in found if not listener.loopback] == []


def _commit_count(spark, table: str) -> int:
    path = table_path(settings(), DATABASE, table)
    return len(list(timeline_folder(Path(path)).glob("*.commit")))


def _quiet(_: str) -> None:
    pass


def _inflight(table: str) -> int:
    timeline = timeline_folder(Path(table_path(settings(), DATABASE, table)))
    return len([p for p in timeline.glob("*") if p.name.endswith(".inflight")])


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 60
    while alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still alive"
        time.sleep(0.1)


def _kill_9(name: str) -> None:
    conf = settings()
    service = next(s for s in chain.services(conf) if s.name == name)
    pid = stack.running_pid(service, conf)
    assert pid is not None, f"{name} is not running"
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)


def _kafka_env() -> dict[str, str]:
    """`lakehouse` in a process of its own, on the chain's topics and bronze database."""
    return {
        **os.environ,
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        "LAKEHOUSE_SOURCE_KINDS": json.dumps({"ems": "kafka", "ecomm": "kafka"}),
    }


def _ingest_killed_mid_commit(table: str) -> None:
    """`lakehouse ingest` of one table from Kafka, SIGKILLed once its changelog write starts."""
    before = _inflight(f"{table}_changelog")
    process = subprocess.Popen(
        [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", table],
        env=_kafka_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # one kill takes the Python driver and its JVM
    )
    deadline = time.monotonic() + 600
    while _inflight(f"{table}_changelog") == before:
        assert process.poll() is None, "the ingestion finished before the crash point"
        assert time.monotonic() < deadline, "crash point not reached in time"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def test_faults_with_real_components(spark, live_chain: Live) -> None:
    """Acceptance 2: Connect killed -9 and restarted, broker restarted, ingestion killed -9."""
    conf = settings()
    _kill_9("cdc-connect")
    live_chain.workloads.append(
        run_workload(WorkloadOptions(transactions=20, seed=21), conf, _quiet)
    )
    chain.start_service("cdc-connect", conf, _quiet)
    connectors.wait_running(conf, time.monotonic() + conf.start_timeout)

    kafka = next(s for s in chain.services(conf) if s.name == "cdc-kafka")
    assert stack.stop(kafka, conf)
    chain.start_service("cdc-kafka", conf, _quiet)
    live_chain.workloads.append(
        run_workload(WorkloadOptions(transactions=20, seed=22), conf, _quiet)
    )
    markers.wait_published(spark, conf, markers.write_markers(conf))

    _ingest_killed_mid_commit("sales")
    run = publish_and_ingest(spark, live_chain)
    assert run.quarantined == 0, quarantine_reasons(spark)
    assert_bronze_equals_database(spark, live_chain)
    for table in live_chain.tables:
        changelog = bronze(spark, table.changelog_name)
        assert changelog.count() == changelog.select("_cdc_event_id").distinct().count()


def _registry(path: str) -> Any:
    with urllib.request.urlopen(settings().registry_url + path, timeout=10) as response:
        return json.load(response)


def _change_venue(statement: str) -> Any:
    """One statement on ems's venue table, committed; its first row, if it returns rows."""
    table = TABLES["venue"]
    dialect = sql.dialect_of(table)
    with closing(connect(settings(), table)) as connection, connection.cursor() as cursor:
        cursor.execute(statement.format(table=dialect.table(table)))
        first = cursor.fetchone() if cursor.description else None
        connection.commit()
    return first


def test_a_column_added_between_two_changes_is_a_new_version_read_in_one_batch(
    spark, live_chain: Live
) -> None:
    """Issue 59, acceptance 2: ems writes Avro; an update, ADD COLUMN, an update, then
    one ingestion: the registry holds a new version, and the batch decodes both."""
    assert load_tables()["venue"].source.kafka_format == "avro"
    versions = "/groups/default/artifacts/tickit.ems.venue-value/versions"
    known = [v["globalId"] for v in _registry(versions)["versions"]]
    (key,) = _change_venue("select min(venueid) from {table}")
    _change_venue(f"update {{table}} set venueseats = venueseats + 1 where venueid = {key}")
    _change_venue("alter table {table} add column venuephone varchar(20)")
    _change_venue(f"update {{table}} set venuephone = '555', venueseats = 7 where venueid = {key}")
    markers.wait_published(spark, settings(), markers.write_markers(settings()))
    run = publish_and_ingest(spark, live_chain)

    ids = [v["globalId"] for v in _registry(versions)["versions"]]
    new = [i for i in ids if i not in known]
    assert len(new) == 1 and "venuephone" in json.dumps(_registry(f"/ids/globalIds/{new[0]}"))
    records = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", settings().kafka_servers)
        .option("subscribe", "tickit.ems.venue")
        .option("includeHeaders", "true")
        .load()
    )
    framed = records.select(*framing(records["value"]))
    assert {known[-1], new[0]} <= {r.global_id for r in framed.distinct().collect()}
    assert run.quarantined == 0, quarantine_reasons(spark)
    row = bronze(spark, "venue").where(f"venueid = {key}").select("venuephone", "venueseats")
    assert tuple(row.first()) == ("555", 7)
    assert_bronze_equals_database(spark, live_chain)


def test_registry_stopped_is_one_line_nothing_committed_then_exact(spark, live_chain: Live) -> None:
    """Issue 59, acceptance 3: a new process cannot read ems's Avro without the registry."""
    conf = settings()
    live_chain.workloads.append(
        run_workload(WorkloadOptions(transactions=20, seed=31), conf, _quiet)
    )
    markers.wait_published(spark, conf, markers.write_markers(conf))
    registry = next(s for s in chain.services(conf) if s.name == "cdc-registry")
    ems = [t.name for t in live_chain.tables if t.source.kafka_format == "avro"]
    commits = {name: _commit_count(spark, name) for name in ems}
    assert stack.stop(registry, conf)
    failed = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", ",".join(ems)],
        env=_kafka_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    chain.start_service("cdc-registry", conf, _quiet)
    assert failed.returncode == 2, failed.stderr[-2000:]
    error = failed.stderr.strip().splitlines()
    assert f"schema registry at {conf.registry_url} did not answer" in error[-1], error
    assert "Traceback" not in failed.stderr
    assert {name: _commit_count(spark, name) for name in ems} == commits
    run = publish_and_ingest(spark, live_chain)
    assert run.quarantined == 0, quarantine_reasons(spark)
    assert_bronze_equals_database(spark, live_chain)


def test_an_avro_topic_read_as_json_is_one_line_nothing_committed(spark, live_chain: Live) -> None:
    """A source left at its default kafka_format (json) while its connector writes Avro."""
    conf = settings()
    live_chain.workloads.append(
        run_workload(WorkloadOptions(transactions=20, seed=37), conf, _quiet)
    )
    markers.wait_published(spark, conf, markers.write_markers(conf))
    ems = [t.name for t in live_chain.tables if t.source.kafka_format == "avro"]
    commits = {name: _commit_count(spark, name) for name in ems}
    failed = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", ",".join(ems)],
        env={**_kafka_env(), "LAKEHOUSE_SOURCE_KAFKA_FORMATS": json.dumps({"ems": "json"})},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert failed.returncode == 2, failed.stderr[-2000:]
    error = failed.stderr.strip().splitlines()
    assert "holds Avro records" in error[-1] and "kafka_format: avro" in error[-1], error
    assert "Traceback" not in failed.stderr
    assert {name: _commit_count(spark, name) for name in ems} == commits
    run = publish_and_ingest(spark, live_chain)
    assert run.quarantined == 0, quarantine_reasons(spark)
    assert_bronze_equals_database(spark, live_chain)


def test_dbt_build_passes_on_the_live_bronze(spark, live_chain: Live, tmp_path: Path) -> None:
    """Acceptance 1, its last part: `dbt build` (models and every data test) on the chain's bronze.

    crm (SQL Server, not installable here) comes from generated files with the
    snapshot's seed and scale, as in `lakehouse run --live`; the models go to
    schemas of their own, so the session's marts stay as the dbt tests expect.
    """
    generate(GenerateOptions(out=str(tmp_path), scale=SCALE, seed=SEED, change_batches=0))
    conf = dataclasses.replace(settings(), landing=str(tmp_path))
    live = {t.name for t in live_chain.tables}
    crm = [t for t in load_tables(database=DATABASE).values() if t.name not in live]
    assert [t.source.name for t in crm] == ["crm"]
    assert all(r.committed for r in ingest(spark, conf, crm, log=_quiet).tables)
    schemas = {"dbt_schema": "it_live", "marts_schema": "it_live_marts"}
    build = dataclasses.replace(conf, bronze_database=DATABASE, **schemas)
    # Unit tests read fixtures, not bronze: the daily build runs them.
    unit_tests = ["--exclude", "resource_type:unit_test"]
    results = dbt(["build", *unit_tests], tmp_path / "target", conf=build)
    statuses = {r["status"] for r in results["results"]}
    assert statuses <= {"success", "pass", "no-op"}, statuses  # no-op: the exposures
    assert len(results["results"]) > 300  # every model and data test, none skipped
