"""A whole database by pattern on the live chain: tables found from their topics, while it runs.

A copy of the project whose conf/tables.yml lists no table, only the live
chain's two sources with `include` patterns: the continuous service finds the
PostgreSQL and MariaDB tables the patterns match from their Kafka topics and
key schemas, serves a table created at the source while it runs from the next
look on, reports a table without a primary key with the fix; `lakehouse
status` reads their Kafka backlogs, `lakehouse dbt-sources` declares them,
and `lakehouse reconcile` finds them equal to the source, then names each key
that changes behind the project's back made differ.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml

from dashboard import pipeline
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import settings
from ingestion.sources import kafka_client
from lakehouse.cdc import connectors, databases, markers
from tests.cdc.live import Live
from tests.cdc.test_own_table_guide import dbt_sources_file, lakehouse
from tests.guides import project_copy

DATABASE = "it_found_bronze"
DEADLINE_SECONDS = 600
# With it_found_a and it_found_c (created while the service runs), a schema of 20
# PostgreSQL tables the one pattern serves.
MANY = [f"it_found_t{n:02d}" for n in range(1, 19)]
SERVED = ["it_found_a", "it_found_b", "it_found_c", *MANY]
SOURCES = {
    "ems": {"connector": "postgresql", "kind": "kafka", "topic_prefix": "tickit",
            "include": [r"ems\.it_found_.*"], "database_url_env": "IT_FOUND_EMS_URL"},
    "ecomm": {"connector": "mysql", "kind": "kafka", "topic_prefix": "tickit",
              "include": [r"ecomm\.it_found_.*"], "exclude": [r"ecomm\.it_found_skip"],
              "database_url_env": "IT_FOUND_ECOMM_URL"},
    "crm": {"connector": "sqlserver"},
}  # fmt: skip


def source_sql(database: str, statements: str) -> None:
    flag = "-c" if database == "ems" else "-e"
    done = lakehouse("cdc", "sql", database, flag, statements)
    assert done.returncode == 0, done.stderr


def published(spark) -> None:
    markers.wait_published(spark, settings(), markers.write_markers(settings()))


def service(root: Path, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "LAKEHOUSE_PROJECT_DIR": str(root),
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        "LAKEHOUSE_INGEST_POLL_SECONDS": "0.5",
        "LAKEHOUSE_INGEST_MIN_SYNC_SECONDS": "1",
        "LAKEHOUSE_INGEST_DISCOVER_SECONDS": "1",
        "LAKEHOUSE_INGEST_HEALTH_FILE": str(root / "health.json"),
    }
    command = [sys.executable, "-m", "lakehouse.cli", "ingest", "--continuous"]
    with log.open("w") as out:
        return subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def rows_of(spark, table: str, columns: list[str]) -> list[tuple]:
    """The bronze table's live rows, [] while it has no commit."""
    path = to_hadoop_uri(table_path(settings(), DATABASE, table))
    try:
        frame = spark.read.format("hudi").load(path).where("not _cdc_is_deleted")
        return sorted(tuple(row) for row in frame.select(*columns).collect())
    except Exception:  # no table yet, or no completed commit
        return []


def wait_for(what: str, ready: Callable[[], bool], process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not ready():
        said = log.read_text()[-2000:]
        assert process.poll() is None, f"the service exited before {what}: {said}"
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_SECONDS} s"
        time.sleep(0.5)


@dataclass(frozen=True)
class Found:
    """The project copy whose service found the tables, and what the service said."""

    root: Path
    said: str


def run_service(spark, root: Path, log: Path) -> None:
    """The continuous service until it served the found tables, a new one and an update."""
    process = service(root, log)
    try:
        a_rows = lambda: rows_of(spark, "it_found_a", ["id", "name"])  # noqa: E731
        wait_for("it_found_a", lambda: a_rows() == [(1, "ada"), (2, "grace")], process, log)
        b_rows = lambda: rows_of(spark, "it_found_b", ["sku", "qty"])  # noqa: E731
        wait_for("it_found_b", lambda: b_rows() == [(7, 3)], process, log)
        for n, name in enumerate(MANY, start=1):
            many = lambda name=name: rows_of(spark, name, ["id", "n"])  # noqa: E731
            wait_for(name, lambda many=many, n=n: many() == [(n, n * 10)], process, log)
        source_sql("ems", "create table ems.it_found_c (code text primary key, n bigint);"
                   "insert into ems.it_found_c values ('x', 9000000000);"
                   "update ems.it_found_a set name = 'lovelace' where id = 1;")  # fmt: skip
        c_rows = lambda: rows_of(spark, "it_found_c", ["code", "n"])  # noqa: E731
        wait_for("it_found_c, created while it runs", lambda: c_rows() == [("x", 9000000000)],
                 process, log)  # fmt: skip
        wait_for("the update", lambda: a_rows()[0] == (1, "lovelace"), process, log)
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=DEADLINE_SECONDS) == 0, log.read_text()[-2000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def found(spark, live_chain: Live, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Found]:
    """Source tables by pattern (one without a key, one excluded), served by the service."""
    source_sql("ems", "create table ems.it_found_a (id integer primary key, name text);"
               "insert into ems.it_found_a values (1, 'ada'), (2, 'grace');"
               "create table ems.it_found_nokey (line text);"
               "insert into ems.it_found_nokey values ('no key');"
               + "".join(f"create table ems.{name} (id integer primary key, n integer);"
                         f"insert into ems.{name} values ({n}, {n * 10});"
                         for n, name in enumerate(MANY, start=1)))  # fmt: skip
    source_sql("ecomm", "create table ecomm.it_found_b (sku int primary key, qty int);"
               "insert into ecomm.it_found_b values (7, 3);"
               "create table ecomm.it_found_skip (sku int primary key);"
               "insert into ecomm.it_found_skip values (1);")  # fmt: skip
    published(spark)
    folder = tmp_path_factory.mktemp("whole-database")
    root = project_copy(folder / "project")
    document = yaml.safe_load((root / "conf" / "tables.yml").read_text())
    document.update(sources=SOURCES, tables={})
    (root / "conf" / "tables.yml").write_text(yaml.safe_dump(document, sort_keys=False))
    # As the guide says: `lakehouse cdc up` gives the connectors the patterns' include list.
    registered = lakehouse_in(root, "cdc", "up")
    assert registered.returncode == 0, registered.stdout + registered.stderr
    try:
        run_service(spark, root, folder / "service.log")
        yield Found(root, (folder / "service.log").read_text())
    finally:
        connectors.register_all(settings())  # the repository's connectors, for later modules


def test_the_connectors_capture_only_what_the_patterns_select(spark, found: Found) -> None:
    """On the live connectors: a table the ems pattern leaves out gets no topic, while one
    it selects, created after it, does (it_found_c); ecomm's exclude is a lookahead."""
    live = {name: connectors.registered_config(settings(), name)
            for name in ("tickit-ems", "tickit-ecomm")}  # fmt: skip
    assert live["tickit-ems"]["table.include.list"].startswith("(?:ems\\.it_found_.*),")
    assert live["tickit-ecomm"]["table.include.list"].startswith(
        "(?!(?:ecomm\\.it_found_skip)$)(?:ecomm\\.it_found_.*),"
    )
    source_sql("ems", "create table ems.it_outside (id integer primary key);"
               "insert into ems.it_outside values (1);")  # fmt: skip
    published(spark)  # the marker after the insert is in Kafka: the insert would be too
    topics = kafka_client.topics(settings().kafka_servers, "tickit.ems.it_")
    assert "tickit.ems.it_found_c" in topics and "tickit.ems.it_outside" not in topics


def lakehouse_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`lakehouse ARGS` on the copy of the project, its bronze database the found tables'."""
    conf = settings()
    env = {
        **os.environ,
        "LAKEHOUSE_PROJECT_DIR": str(root),
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        # The sources' databases as a user's own would be given: by URL (the chain's here).
        "IT_FOUND_EMS_URL": f"postgresql://postgres@127.0.0.1:{conf.cdc_postgres_port}/tickit",
        "IT_FOUND_ECOMM_URL": f"mysql://lakehouse@127.0.0.1:{conf.cdc_mariadb_port}/ecomm",
    }
    return subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", *args],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_a_whole_database_by_pattern_and_a_table_created_while_it_runs(spark, found: Found) -> None:
    (listed,) = [line for line in found.said.splitlines() if "found by pattern:" in line]
    assert "found by pattern: 20 table(s): " in listed
    assert sorted(listed.rsplit(": ", 1)[1].split(", ")) == sorted(set(SERVED) - {"it_found_c"})
    assert "serving 1 new table(s): it_found_c" in found.said
    said_once = "topic tickit.ems.it_found_nokey not served: its records carry no key"
    assert found.said.count(said_once) == 1
    assert "it_found_skip" not in found.said and rows_of(spark, "it_found_skip", ["sku"]) == []


def test_status_reads_the_found_tables_kafka_backlogs(found: Found) -> None:
    shown = lakehouse_in(found.root, "status", "--json")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    status = json.loads(shown.stdout)
    backlog = {t["table"]: (t["backlog"], t["backlog_unit"]) for t in status["tables"]}
    assert backlog == {name: (0, "records") for name in SERVED}
    assert [u["topic"] for u in status["unserved"]] == ["tickit.ems.it_found_nokey"]
    assert "tickit.ecomm.it_found_skip" in status["unread"]  # excluded: no table reads it


def test_dbt_sources_declares_the_found_tables(found: Found) -> None:
    written = lakehouse_in(found.root, "dbt-sources")
    assert written.returncode == 0, written.stderr
    (source,) = yaml.safe_load((found.root / dbt_sources_file()).read_text())["sources"]
    declared = {t["name"]: t for t in source["tables"]}
    assert set(declared) == set(SERVED)
    columns = {c["name"]: c["data_type"] for c in declared["it_found_c"]["columns"]}
    assert (columns["code"], columns["n"]) == ("string", "bigint")
    assert declared["it_found_c"]["config"]["meta"]["topic"] == "tickit.ems.it_found_c"


def reconciled(root: Path) -> tuple[int, dict[str, list[tuple[str, str]]]]:
    """`lakehouse reconcile`'s exit code and, per table, its differing keys (its results file)."""
    done = lakehouse_in(root, "reconcile")
    results = Path(done.stdout.rsplit("(results ", 1)[-1].strip().rstrip(")"))
    assert results.is_file(), done.stdout + done.stderr
    tables = json.loads(results.read_text())["tables"]
    return done.returncode, {t["table"]: [(d["key"], d["what"]) for d in t["differences"]]
                             for t in tables}  # fmt: skip


def test_reconcile_names_each_key_bronze_and_the_source_disagree_on(spark, found: Found) -> None:
    """Exact after the service's run; then a row changed and one deleted in bronze behind the
    project's back, and one inserted at the source with no event (binary log off for it).
    Last in the module: it leaves bronze changed."""
    assert reconciled(found.root) == (0, {name: [] for name in SERVED})
    spark.sql(f"update {DATABASE}.it_found_a set name = 'tampered' where id = 2")
    spark.sql(f"delete from {DATABASE}.it_found_c where code = 'x'")
    with closing(databases.mariadb_root(settings())) as connection, connection.cursor() as cursor:
        cursor.execute("set session sql_log_bin = 0")
        cursor.execute("insert into ecomm.it_found_b values (8, 1)")
        connection.commit()
    assert reconciled(found.root) == (1, {
        **{name: [] for name in MANY},
        "it_found_a": [("id=2", "name: source grace, bronze tampered")],
        "it_found_b": [("sku=8", "not in bronze")],
        "it_found_c": [("code=x", "not in bronze")],
    })  # fmt: skip
    # Both checks are in the `_reconcile` table; the Pipeline page shows each table's last.
    latest, note = pipeline.reconciled(replace(settings(), bronze_database=DATABASE))
    assert note == ""
    shown = latest[["table_name", "equal", "differences", "first_differences"]]
    rows = [tuple(row) for row in shown.itertuples(index=False)]
    assert [row for row in rows if not row[1]] == [
        ("it_found_a", False, 1, "id=2: name: source grace, bronze tampered"),
        ("it_found_b", False, 1, "sku=8: not in bronze"),
        ("it_found_c", False, 1, "code=x: not in bronze"),
    ]  # fmt: skip
    assert sorted(row[0] for row in rows if row[1]) == MANY
    checks = spark.sql(f"select equal, count(*) from {DATABASE}._reconcile group by equal")
    equal_twice = len(SERVED) + len(MANY)
    assert sorted(tuple(row) for row in checks.collect()) == [(False, 3), (True, equal_twice)]
