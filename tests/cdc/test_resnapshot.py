"""`lakehouse resnapshot` on the live chain: a narrowing at the source, then the rebuild.

A PostgreSQL and a MariaDB table snapshotted with `code integer`, then
`code` turned to text at the source, with changes under the new type: bronze
cannot store text in its int column, so those events are quarantined. The
rebuild moves the tables aside and asks each connector, through Debezium's
signalling table, for an incremental snapshot; the runs after it apply the
snapshot's events and every later change, and `lakehouse reconcile` finds
bronze equal to each database, row by row.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import pytest

from ingestion.config import Source, TableConfig
from ingestion.engine import ingest
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import Settings, settings
from lakehouse import reconcile, resnapshot
from lakehouse.cdc import markers
from tests.cdc.live import Live
from tests.cdc.test_whole_database import source_sql

DATABASE = "it_resnapshot_bronze"
DEADLINE_SECONDS = 300
NARROWED = {
    "ems": "alter table ems.it_resnap_p alter column code type text using code::text;"
    "update ems.it_resnap_p set code = 'A-1' where id = 1;"
    "insert into ems.it_resnap_p values (3, 'C-3');"
    "delete from ems.it_resnap_p where id = 2;",
    "ecomm": "alter table ecomm.it_resnap_m modify code varchar(20);"
    "update ecomm.it_resnap_m set code = 'A-1' where id = 1;"
    "insert into ecomm.it_resnap_m values (3, 'C-3');"
    "delete from ecomm.it_resnap_m where id = 2;",
}


def table(source: str, connector: str, name: str) -> TableConfig:
    return TableConfig(
        name=name,
        source=Source(
            source,
            connector,
            kind="kafka",
            kafka_format=settings().source_kafka_formats.get(source, "json"),  # as the chain's
            topic_prefix="tickit",
        ),
        topic=f"tickit.{source}.{name}",
        key=("id",),
        database=DATABASE,
    )


TABLES = [table("ems", "postgresql", "it_resnap_p"), table("ecomm", "mysql", "it_resnap_m")]


def published(spark, conf: Settings) -> None:
    markers.wait_published(spark, conf, markers.write_markers(conf))


def poll(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not done():
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_SECONDS} s"
        time.sleep(1)


@dataclasses.dataclass(frozen=True)
class Narrowed:
    conf: Settings
    quarantined: dict[str, int]
    rebuilt: list[resnapshot.Rebuilt]


@pytest.fixture(scope="module")
def narrowed(spark, live_chain: Live) -> Narrowed:
    """Both tables ingested under `integer`, narrowed at the source, then rebuilt."""
    conf = dataclasses.replace(settings(), bronze_database=DATABASE)
    source_sql("ems", "create table ems.it_resnap_p (id integer primary key, code integer);"
               "insert into ems.it_resnap_p values (1, 1), (2, 2);")  # fmt: skip
    source_sql("ecomm", "create table ecomm.it_resnap_m (id int primary key, code int);"
               "insert into ecomm.it_resnap_m values (1, 1), (2, 2);")  # fmt: skip
    published(spark, conf)
    ingest(spark, conf, TABLES, log=lambda _: None)
    for database, statements in NARROWED.items():
        source_sql(database, statements)
    published(spark, conf)
    run = ingest(spark, conf, TABLES, log=lambda _: None)
    quarantined = {result.table: result.quarantined for result in run.tables}
    rebuilt = [resnapshot.resnapshot(spark, conf, t, None, log=lambda _: None) for t in TABLES]
    return Narrowed(conf, quarantined, rebuilt)


def test_the_narrowing_s_events_are_quarantined(narrowed: Narrowed) -> None:
    """Every event under `text` (the update, the insert; the delete's before image too)."""
    assert narrowed.quarantined == {"it_resnap_p": 3, "it_resnap_m": 3}


def test_the_rebuild_asks_each_connector_for_an_incremental_snapshot(narrowed: Narrowed) -> None:
    assert [r.signalled for r in narrowed.rebuilt] == ["ems.it_resnap_p", "ecomm.it_resnap_m"]


def test_after_the_rebuild_bronze_equals_each_source_database(spark, narrowed: Narrowed) -> None:
    """The snapshot's events and a change made after the rebuild, applied by later runs."""
    source_sql("ems", "update ems.it_resnap_p set code = 'A-2' where id = 1;")
    source_sql("ecomm", "update ecomm.it_resnap_m set code = 'A-2' where id = 1;")

    def equal() -> bool:
        ingest(spark, narrowed.conf, TABLES, log=lambda _: None)
        return all(reconcile.reconcile_table(spark, narrowed.conf, t).equal for t in TABLES)

    poll("bronze equal to the sources", equal)
    for t in TABLES:
        path = to_hadoop_uri(table_path(narrowed.conf, DATABASE, t.name))
        rows = spark.read.format("hudi").load(path).where("not _cdc_is_deleted")
        assert sorted(tuple(r) for r in rows.select("id", "code").collect()) == [
            (1, "A-2"), (3, "C-3")
        ], t.name  # fmt: skip


def test_the_replaced_tables_are_kept(spark, narrowed: Narrowed) -> None:
    for rebuilt in narrowed.rebuilt:
        kept = spark.read.format("hudi").load(to_hadoop_uri(rebuilt.kept["bronze"]))
        assert sorted(tuple(r) for r in kept.select("id", "code").collect()) == [(1, 1), (2, 2)]
