"""Every landing format, ingested, equals the generator's expected final state."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ingestion.checkpoint import read_checkpoint
from ingestion.config import TableConfig
from ingestion.paths import table_path
from ingestion.results import TableResult
from ingestion.settings import Settings

from .bronze import (
    TABLES,
    differences,
    expected,
    key_of,
    make_landing,
    run_ingest,
    settings_for,
    spark_rows,
    tables_for,
    thrift_rows,
)

FORMATS = ("json", "json-schemaless", "unwrapped", "avro")


@dataclass
class Ingested:
    landing: Path
    conf: Settings
    database: str
    tables: list[TableConfig]
    results: dict[str, TableResult]
    stored_after: int  # RDDs the run left stored in the session's block manager


def stored_rdds(spark) -> int:
    return spark.sparkContext._jsc.sc().getPersistentRDDs().size()


@pytest.fixture(scope="module", params=FORMATS)
def ingested(request, spark, tmp_path_factory):
    """One landing zone per format (snapshot + 3 change batches), ingested once."""
    fmt = request.param
    root = tmp_path_factory.mktemp(f"format-{fmt}")
    landing = make_landing(root / "landing", format=fmt, change_batches=3)
    conf = settings_for(landing, root / "lake")
    database = "bronze_" + fmt.replace("-", "_")
    tables = tables_for(database)
    stored = stored_rdds(spark)
    results = run_ingest(spark, conf, tables)
    return Ingested(landing, conf, database, tables, results, stored_rdds(spark) - stored)


def test_every_table_equals_the_expected_final_state_in_spark(ingested, spark) -> None:
    for table in TABLES:
        assert ingested.results[table].committed
        rows = spark_rows(spark, ingested.conf, ingested.database, table)
        assert differences(rows, expected(ingested.landing, table), key_of(table)) == [], table


def test_every_table_equals_the_expected_final_state_through_thrift(ingested) -> None:
    for table in TABLES:
        wanted = expected(ingested.landing, table)
        columns = [c for c in wanted[0] if c != "_deleted"] + ["_cdc_is_deleted"]
        rows = thrift_rows(ingested.database, table, columns)
        assert differences(rows, wanted, key_of(table)) == [], table


def test_a_run_leaves_none_of_its_rows_stored(ingested) -> None:
    """Each table's kept lines and rows (ingestion/kept.py) are freed when its commits are
    done: the continuous service's session must not hold every batch it ever read."""
    assert ingested.stored_after == 0


def test_nothing_is_quarantined_and_tombstones_are_skipped(ingested) -> None:
    results = ingested.results
    assert all(r.quarantined == 0 for r in results.values())
    assert results["sales"].tombstones > 0
    assert "d" in results["sales"].events


def test_a_second_run_commits_nothing(ingested, spark) -> None:
    conf, database, tables = ingested.conf, ingested.database, ingested.tables
    before = {
        t.name: read_checkpoint(spark, table_path(conf, database, t.name), t.topic) for t in tables
    }
    again = run_ingest(spark, conf, tables)
    assert not any(r.committed for r in again.values())
    assert all(r.files == 0 for r in again.values())
    after = {
        t.name: read_checkpoint(spark, table_path(conf, database, t.name), t.topic) for t in tables
    }
    assert after == before
    assert before["sales"].offsets  # the checkpoint really is in the commit
