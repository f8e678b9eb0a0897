"""The writer's Hudi options, checked on real Hudi tables read back."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from ingestion import hudi_timeline, hudi_writer
from ingestion.commits import StoredRange, unstored_events
from ingestion.config import load_tables

from .bronze import BLOOM_FILTER, footer_keys, footers


def events(spark, first: int, count: int):
    """`count` changelog rows keyed by event id, with a position to order them."""
    rows = [(f"e{n}", f"{n:020d}", n) for n in range(first, first + count)]
    schema = "_cdc_event_id string, _cdc_position string, salesid int"
    return spark.createDataFrame(rows, schema).coalesce(1)


def file_versions(path: Path) -> Counter:
    """Versions per file group (Hudi's file id): 2 means a commit rewrote the file."""
    names = [p.name for p in path.glob("*.parquet")]
    return Counter(name.split("_")[0] for name in names)


def test_a_redelivered_event_stays_one_row_and_no_changelog_file_is_rewritten(
    spark, tmp_path: Path
) -> None:
    """Stored ids of the batch's positions are left out; the new events are a file of their own."""
    table = load_tables(database="writer_test")["sales"]
    path = tmp_path / "sales_changelog"
    options = hudi_writer.changelog_options(table, parallelism=1)
    hudi_writer.write(events(spark, 0, 50), str(path), options, "bulk_insert", new_table=True)
    # 40..49 again (a connector's redelivery after a restart), 50..59 new.
    redelivered = StoredRange(first=f"{40:020d}", last=f"{49:020d}")
    batch = unstored_events(spark, str(path), events(spark, 40, 20), redelivered)
    hudi_writer.write(batch, str(path), options, "bulk_insert", new_table=False)
    assert sorted(file_versions(path).values()) == [1, 1]
    stored = spark.read.format("hudi").load(str(path)).select("salesid").collect()
    assert sorted(r.salesid for r in stored) == list(range(60))
    # Only redelivered events: nothing left to write.
    every = StoredRange(first=f"{0:020d}", last=f"{59:020d}")
    assert unstored_events(spark, str(path), events(spark, 0, 60), every).count() == 0


# Small-file handling on, so that an upsert rewrites the changelog's one file.
REWRITING = {"hoodie.parquet.small.file.limit": str(100 * 1024**2)}


def parquet_codecs(spark, path: Path) -> set[str]:
    """The codec of every column chunk of every Parquet file under `path`."""
    return {
        column.getCodec().name()
        for footer in footers(spark, path)
        for block in footer.getBlocks()
        for column in block.getColumns()
    }


def test_bronze_and_changelog_commits_merge_spark_rows_not_avro_records(
    spark, tmp_path: Path
) -> None:
    """Files written through Hudi's Avro records carry their Avro schema; Spark's rows do not.

    The bronze upsert rewrites its bucket's file (newer positions win, an
    older one is ignored) and an upsert the changelog's small file: every
    file either wrote, and the rows read back, come from Spark's merger.
    """
    table = load_tables(database="writer_test")["sales"]
    changelog = tmp_path / "sales_changelog"
    options = {**hudi_writer.changelog_options(table, parallelism=1), **REWRITING}
    hudi_writer.write(events(spark, 0, 50), str(changelog), options, "bulk_insert", new_table=True)
    hudi_writer.write(events(spark, 50, 20), str(changelog), options, "upsert", new_table=False)

    bronze = tmp_path / "sales"
    layout = hudi_writer.BronzeLayout(merge_on_read=False, buckets=1)
    options = hudi_writer.bronze_options(table, parallelism=1, layout=layout)
    schema = "_cdc_position string, salesid int"
    first = spark.createDataFrame([(f"{n + 50:020d}", n) for n in range(10)], schema)
    hudi_writer.write(first, str(bronze), options, "upsert", new_table=True)
    # salesid 5..9 at newer positions win; salesid 0 at an older one is ignored.
    later = [(f"{n + 100:020d}", n) for n in range(5, 10)] + [(f"{0:020d}", 0)]
    hudi_writer.write(
        spark.createDataFrame(later, schema), str(bronze), options, "upsert", new_table=False
    )
    stored = spark.read.format("hudi").load(str(bronze)).select("salesid", "_cdc_position")
    assert sorted((r.salesid, int(r._cdc_position)) for r in stored.collect()) == [
        (n, n + 100 if n >= 5 else n + 50) for n in range(10)
    ]
    for path in (changelog, bronze):
        assert sorted(file_versions(path).values()) == [2]  # the upsert rewrote the file
        keys = footer_keys(spark, path)
        assert "parquet.avro.schema" not in keys and "org.apache.spark.version" in keys
    # No index of either reads key filters: the files the upserts rewrote carry none.
    for path in (changelog, bronze):
        rewritten = max(path.glob("*.parquet"), key=lambda file: file.stat().st_mtime_ns)
        assert BLOOM_FILTER not in footer_keys(spark, rewritten)


def test_hudi_writes_zstd_parquet_files(spark, tmp_path: Path) -> None:
    """conf/hudi-defaults.conf's codec reaches a bulk insert's file and an upsert's rewrite."""
    table = load_tables(database="writer_test")["sales"]
    path = tmp_path / "sales_changelog"
    options = {**hudi_writer.changelog_options(table, parallelism=1), **REWRITING}
    hudi_writer.write(events(spark, 0, 50), str(path), options, "bulk_insert", new_table=True)
    hudi_writer.write(events(spark, 50, 20), str(path), options, "upsert", new_table=False)
    assert sorted(file_versions(path).values()) == [2]  # the upsert rewrote the file
    assert parquet_codecs(spark, path) == {"ZSTD"}


def test_hudi_plans_a_clean_after_ten_commits_not_after_each(spark, tmp_path: Path) -> None:
    """conf/hudi-defaults.conf: cleaning, planned after every commit by default, waits for ten."""
    table = load_tables(database="writer_test")["sales"]
    path = tmp_path / "sales_changelog"
    # Every commit rewrites the one small file; keeping one commit's files leaves old ones to clean.
    options = {
        **hudi_writer.changelog_options(table, parallelism=1),
        **REWRITING,
        "hoodie.clean.commits.retained": "1",
    }
    hudi_writer.write(events(spark, 0, 5), str(path), options, "bulk_insert", new_table=True)
    for batch in range(1, 12):
        hudi_writer.write(events(spark, batch * 5, 5), str(path), options, "upsert", False)
    timeline = [p.name for p in hudi_timeline.timeline_folder(path).iterdir()]
    assert len([n for n in timeline if n.endswith(".commit")]) == 12
    assert len([n for n in timeline if n.endswith(".clean")]) == 1
    stored = spark.read.format("hudi").load(str(path)).select("salesid").collect()
    assert sorted(r.salesid for r in stored) == list(range(60))


def merges_by_record_position(frame) -> bool:
    """Whether Hudi's reader of `frame` merges log records by position (its own setting)."""
    scan = frame._jdf.queryExecution().executedPlan().collectLeaves().head()
    file_format = scan.relation().fileFormat()
    field = file_format.getClass().getDeclaredField("shouldUseRecordPosition")
    field.setAccessible(True)
    return field.getBoolean(file_format)


def test_a_merge_on_read_snapshot_merges_log_records_by_key(spark, tmp_path: Path) -> None:
    """conf/hudi-defaults.conf: a bucket's log records meet their base rows by record key
    (bronze's log blocks carry no record positions), the newest in the source's order winning."""
    table = load_tables(database="writer_test")["sales"]
    path = tmp_path / "sales"
    options = hudi_writer.bronze_options(table, 1, hudi_writer.BronzeLayout.of(True, 2, False))
    schema = "salesid int, _cdc_position string, qtysold int"
    first = [(n, "0001", 1) for n in range(10)]
    changes = [(n, "0002", 2) for n in range(0, 10, 3)] + [(4, "0000", 9)]  # one stale change
    hudi_writer.write(spark.createDataFrame(first, schema), str(path), options, "upsert", True)
    hudi_writer.write(spark.createDataFrame(changes, schema), str(path), options, "upsert", False)
    assert list(path.glob(".*.log.*")), "the changes went to log files"
    snapshot = spark.read.format("hudi").load(str(path))
    assert not merges_by_record_position(snapshot)
    stored = {r.salesid: r.qtysold for r in snapshot.select("salesid", "qtysold").collect()}
    assert stored == {n: 2 if n % 3 == 0 else 1 for n in range(10)}


def test_a_local_timeline_is_listed_as_hadoop_lists_it(spark, tmp_path: Path) -> None:
    """The OS listing of a local table (hudi_timeline.py) names what Hadoop's does, at its
    times, leaving out the `.crc` checksums beside each file, and needs no JVM."""
    table = load_tables(database="writer_test")["sales"]
    path = tmp_path / "sales_changelog"
    options = hudi_writer.changelog_options(table, parallelism=1)
    hudi_writer.write(events(spark, 0, 5), str(path), options, "bulk_insert", new_table=True)
    hudi_writer.write(events(spark, 5, 5), str(path), options, "insert", new_table=False)
    for folder in (path / hudi_timeline.META_FOLDER, hudi_timeline.timeline_folder(path)):
        assert any(name.endswith(".crc") for name in os.listdir(folder))
        hadoop = hudi_timeline._store_mtimes(spark, folder.as_uri())
        assert hadoop and hudi_timeline._local_mtimes(folder) == pytest.approx(hadoop, abs=0.001)
    no_jvm = None
    timeline = hudi_timeline.timeline_files(no_jvm, str(path)) or {}
    assert len([name for name in timeline if name.endswith(".commit")]) == 2
    assert hudi_timeline.timeline_files(no_jvm, str(tmp_path / "absent")) is None
