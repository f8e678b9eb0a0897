"""A whole database by pattern on the live chain: tables found from their topics, while it runs.

A copy of the project whose conf/tables.yml lists no table, only the live
chain's two sources with `include` patterns: the continuous service finds the
PostgreSQL and MariaDB tables the patterns match from their Kafka topics and
key schemas, serves a table created at the source while it runs from the next
look on, reports a table without a primary key with the fix, and `lakehouse
dbt-sources` declares the found tables.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import settings
from lakehouse.cdc import markers
from tests.cdc.live import Live
from tests.cdc.test_own_table_guide import dbt_sources_file, lakehouse, project_copy

DATABASE = "it_found_bronze"
DEADLINE_SECONDS = 600
SOURCES = {
    "ems": {"connector": "postgresql", "kind": "kafka", "topic_prefix": "tickit",
            "include": [r"ems\.it_found_.*"]},
    "ecomm": {"connector": "mysql", "kind": "kafka", "topic_prefix": "tickit",
              "include": [r"ecomm\.it_found_.*"], "exclude": [r"ecomm\.it_found_skip"]},
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


def test_a_whole_database_by_pattern_and_a_table_created_while_it_runs(
    spark, live_chain: Live, tmp_path: Path
) -> None:
    source_sql("ems", "create table ems.it_found_a (id integer primary key, name text);"
               "insert into ems.it_found_a values (1, 'ada'), (2, 'grace');"
               "create table ems.it_found_nokey (line text);"
               "insert into ems.it_found_nokey values ('no key');")  # fmt: skip
    source_sql("ecomm", "create table ecomm.it_found_b (sku int primary key, qty int);"
               "insert into ecomm.it_found_b values (7, 3);"
               "create table ecomm.it_found_skip (sku int primary key);"
               "insert into ecomm.it_found_skip values (1);")  # fmt: skip
    published(spark)
    root = project_copy(tmp_path / "project")
    document = yaml.safe_load((root / "conf" / "tables.yml").read_text())
    document.update(sources=SOURCES, tables={})
    (root / "conf" / "tables.yml").write_text(yaml.safe_dump(document, sort_keys=False))
    log = tmp_path / "service.log"
    process = service(root, log)
    try:
        a_rows = lambda: rows_of(spark, "it_found_a", ["id", "name"])  # noqa: E731
        wait_for("it_found_a", lambda: a_rows() == [(1, "ada"), (2, "grace")], process, log)
        b_rows = lambda: rows_of(spark, "it_found_b", ["sku", "qty"])  # noqa: E731
        wait_for("it_found_b", lambda: b_rows() == [(7, 3)], process, log)
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
    said = log.read_text()
    assert "found by pattern: 2 table(s): it_found_a, it_found_b" in said
    assert "serving 1 new table(s): it_found_c" in said
    assert said.count("topic tickit.ems.it_found_nokey not served: its records carry no key") == 1
    assert "it_found_skip" not in said and rows_of(spark, "it_found_skip", ["sku"]) == []

    env = {**os.environ, "LAKEHOUSE_PROJECT_DIR": str(root), "LAKEHOUSE_BRONZE_DATABASE": DATABASE}
    written = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "dbt-sources"],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    (source,) = yaml.safe_load((root / dbt_sources_file()).read_text())["sources"]
    declared = {t["name"]: t for t in source["tables"]}
    assert set(declared) == {"it_found_a", "it_found_b", "it_found_c"}
    columns = {c["name"]: c["data_type"] for c in declared["it_found_c"]["columns"]}
    assert (columns["code"], columns["n"]) == ("string", "bigint")
    assert declared["it_found_c"]["config"]["meta"]["topic"] == "tickit.ems.it_found_c"
