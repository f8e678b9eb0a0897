"""Pure parts of ingestion, no Spark: positions, types, config validation, file names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ingestion import maintenance
from ingestion.config import ConfigError, load_tables
from ingestion.decode.types import (
    FieldType,
    UnknownTypeError,
    from_connect,
    incompatibility,
    parse_config_type,
)
from ingestion.hudi_timeline import TABLE_PROPERTIES, timeline_folder
from ingestion.maintenance import Maintained, needs_clustering, needs_compaction
from ingestion.ordering import connector_of, position_key
from ingestion.sources.landing import LandingFile, advance, new_files, parse_file_name

from .bronze import settings_for, tables_for


def test_positions_sort_in_commit_order_for_every_connector() -> None:
    pg = [position_key("postgresql", {"lsn": n}) for n in (9, 10, 1090317720624)]
    assert pg == sorted(pg)
    mysql = [
        position_key("mysql", {"file": f, "pos": p, "row": r})
        for f, p, r in [
            ("mysql-bin.000003", 999, 1),
            ("mysql-bin.000003", 1000, 0),
            ("mysql-bin.000003", 1000, 2),
            ("mysql-bin.000010", 4, 0),
        ]
    ]
    assert mysql == sorted(mysql) and len(set(mysql)) == 4
    sqlserver = [
        position_key("sqlserver", {"commit_lsn": c, "change_lsn": ch, "event_serial_no": n})
        for c, ch, n in [
            ("0000002a:00000c38:0003", None, None),  # a snapshot read
            ("0000002a:00000c38:0004", "0000002a:00000c38:0002", 1),
            ("0000002a:00000c38:0004", "0000002a:00000c38:0002", 2),
            ("0000002b:00000010:0001", "0000002b:00000008:0001", 1),
        ]
    ]
    assert sqlserver == sorted(sqlserver)


def test_connector_is_told_by_its_source_block() -> None:
    assert connector_of({"connector": "mysql"}) == "mysql"
    assert connector_of({"commit_lsn": "0000002a:00000c38:0003"}) == "sqlserver"
    assert connector_of({"file": "mysql-bin.000001", "pos": 4}) == "mysql"
    assert connector_of({"lsn": 42}) == "postgresql"


def test_connect_schema_fields_map_to_spark_types() -> None:
    decimal = from_connect({
        "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "2", "connect.decimal.precision": "8"},
    })  # fmt: skip
    assert decimal == FieldType("decimal", 8, 2, "bytes")
    assert decimal.spark_type == "decimal(8,2)"
    assert from_connect({"type": "int32", "name": "io.debezium.time.Date"}).spark_type == "date"
    assert from_connect({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}).kind == (
        "timestamp_us"
    )
    assert from_connect({"type": "int16"}).spark_type == "int"
    assert from_connect({"type": "struct", "fields": []}).kind == "string"


def test_type_changes_that_lose_data_are_incompatible() -> None:
    table = parse_config_type("decimal(8,2)")
    assert incompatibility(parse_config_type("decimal(8,2)", "double"), table) is None
    assert incompatibility(FieldType("float64"), table) is None  # decimal.handling.mode=double
    assert incompatibility(FieldType("int16"), table) is None
    assert incompatibility(FieldType("decimal", 10, 0, "bytes"), table) is not None
    assert incompatibility(FieldType("string"), FieldType("int32")) is not None
    assert incompatibility(FieldType("int64"), FieldType("int32")) is not None
    assert incompatibility(FieldType("int16"), FieldType("int32")) is None


def test_sink_file_names_and_checkpoints() -> None:
    parsed = parse_file_name("s3a://b/topics/t.a.b/year=2024/t.a.b+1+0000000042.avro", "t.a.b")
    assert parsed == LandingFile(
        1, 42, "s3a://b/topics/t.a.b/year=2024/t.a.b+1+0000000042.avro", "avro"
    )
    assert parse_file_name("/x/other+0+0000000001.json", "t.a.b") is None
    assert parse_file_name("/x/t.a.b+0+1.json.tmp", "t.a.b") is None
    files = [LandingFile(0, 0, "a", "json"), LandingFile(0, 10, "b", "json"),
             LandingFile(1, 0, "c", "json")]  # fmt: skip
    assert new_files(files, {0: 0}) == files[1:]
    assert advance({0: 0}, files[1:]) == {0: 10, 1: 0}


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tables.yml"
    path.write_text(text)
    return path


VALID_SOURCE = "sources: {ems: {connector: postgresql}}\n"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("{source: ems, topic: t, key: []}", "table 'x', field 'key': needs at least one column"),
        ("{source: nope, topic: t, key: [id]}", "field 'source': 'nope' is not declared"),
        ("{source: ems, key: [id]}", "field 'topic': is required"),
        ("{source: ems, topic: t, key: [id], table_type: big}", "field 'table_type': 'big'"),
        ("{source: ems, topic: t, key: [id], delete_mode: maybe}", "field 'delete_mode'"),
        ("{source: ems, topic: t, key: [id], columns: {id: int99}}", "field 'columns.id'"),
        ("{source: ems, topic: t, key: [idd], columns: {id: int32}}", "unknown column 'idd'"),
        ("{source: ems, topic: t, key: [id], buckets: 0}", "field 'buckets': 0 is not a whole"),
        ("{source: ems, topic: t, key: [id], buckets: two}", "field 'buckets': 'two' is not"),
        (
            "{source: ems, topic: t, key: [id], partition_by: [p], buckets: 2}",
            "field 'buckets': the bucket index finds a key only in its own partition",
        ),
    ],
)
def test_invalid_table_config_names_the_field(tmp_path: Path, table: str, message: str) -> None:
    path = _config(tmp_path, VALID_SOURCE + f"tables:\n  x: {table}\n")
    with pytest.raises(ConfigError, match=message) as error:
        load_tables(path)
    assert str(path) in str(error.value)


def test_the_project_table_config_is_valid() -> None:
    tables = load_tables()
    assert set(tables) == {"category", "event", "venue", "date", "listing", "sales", "users"}
    assert tables["sales"].source.connector == "mysql"
    assert tables["users"].topic == "tickit.crm.user"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("int16", FieldType("int16")),
        ("timestamp_tz", FieldType("timestamp_tz")),
        ("time_us", FieldType("time_us")),
        ("tinyint", FieldType("int16")),  # what every connector sends for TINYINT
        ("smallint", FieldType("int16")),
        ("int", FieldType("int32")),
        ("integer", FieldType("int32")),
        ("bigint", FieldType("int64")),
        ("float", FieldType("float32")),
        ("real", FieldType("float32")),
        ("double", FieldType("float64")),
        ("double precision", FieldType("float64")),
        ("Double   Precision", FieldType("float64")),
        ("boolean", FieldType("boolean")),
        ("bool", FieldType("boolean")),
        ("string", FieldType("string")),
        ("text", FieldType("string")),
        ("varchar", FieldType("string")),
        ("varchar(100)", FieldType("string")),
        ("char", FieldType("string")),
        ("char(2)", FieldType("string")),
        ("binary", FieldType("bytes")),
        ("bytea", FieldType("bytes")),
        ("date", FieldType("date")),
        ("timestamp", FieldType("timestamp_us")),
        ("decimal(8,2)", FieldType("decimal", 8, 2, "bytes")),
        ("DECIMAL(8, 2)", FieldType("decimal", 8, 2, "bytes")),
        ("numeric(8,2)", FieldType("decimal", 8, 2, "bytes")),
        ("numeric(20)", FieldType("decimal", 20, 0, "bytes")),
        ("decimal(20)", FieldType("decimal", 20, 0, "bytes")),
        ("numeric(50,5)", FieldType("decimal_text", 50, 5, "bytes")),
        ("decimal", FieldType("decimal_text", 0, 0, "variable")),
        ("numeric", FieldType("decimal_text", 0, 0, "variable")),
    ],
)
def test_config_type_names_own_spark_and_sql(name: str, expected: FieldType) -> None:
    assert parse_config_type(name) == expected


def test_config_type_names_follow_the_decimal_mode() -> None:
    assert parse_config_type("numeric", "string") == FieldType("decimal_text", 0, 0, "string")
    assert parse_config_type("numeric(8,2)", "double") == FieldType("decimal", 8, 2, "double")
    assert parse_config_type("numeric").spark_type == "string"
    assert parse_config_type("bigint").spark_type == "bigint"
    assert parse_config_type("smallint").spark_type == "int"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("int99", "unknown column type 'int99' (known: int8, int16, "),
        ("varchar(1,2)", "unknown column type 'varchar(1,2)' (known: "),
        ("int(4)", "unknown column type 'int(4)' (known: "),
        ("decimal_text", "unknown column type 'decimal_text' (known: "),
        ("decimal(3,5)", "decimal scale above its precision in 'decimal(3,5)'"),
        ("numeric(0)", "decimal precision below 1 in 'numeric(0)'"),
    ],
)
def test_unknown_config_types_name_the_valid_ones(name: str, message: str) -> None:
    with pytest.raises(UnknownTypeError) as error:
        parse_config_type(name)
    text = str(error.value)
    assert text.startswith(message) and "\n" not in text
    if "known:" in text:
        assert ", bigint, " in text and ", decimal(p,s), " in text and text.endswith("numeric)")


def test_a_table_config_may_use_spark_names(tmp_path: Path) -> None:
    columns = "{id: bigint, n: int, amount: 'numeric', price: 'decimal(8,2)', at: timestamp}"
    path = _config(tmp_path, VALID_SOURCE + f"tables:\n  x: {{source: ems, topic: t, "
                   f"key: [id], columns: {columns}}}\n")  # fmt: skip
    columns_of = load_tables(path)["x"].columns
    assert {name: kind.spark_type for name, kind in columns_of.items()} == {
        "id": "bigint", "n": "int", "amount": "string", "price": "decimal(8,2)",
        "at": "timestamp",
    }  # fmt: skip
    with pytest.raises(ConfigError, match=r"field 'columns.id': unknown column type 'long' \("):
        load_tables(_config(tmp_path, VALID_SOURCE + "tables:\n  x: {source: ems, topic: t, "
                            "key: [id], columns: {id: long}}\n"))  # fmt: skip


def test_maintenance_compacts_after_a_delta_commit_or_while_a_compaction_is_pending() -> None:
    """Read off the timeline's file names: on merge-on-read a completed `commit` is a compaction."""
    compacted = {"001_002.commit": 0.0}
    assert not needs_compaction(compacted)
    logged = {**compacted, "003_004.deltacommit": 0.0}
    assert needs_compaction(logged)
    assert not needs_compaction({**logged, "005_006.commit": 0.0})
    pending = {**logged, "005.compaction.requested": 0.0, "005.compaction.inflight": 0.0}
    assert needs_compaction(pending)
    assert not needs_compaction({**pending, "005_007.commit": 0.0})
    three = {**compacted, **{f"00{n}_00{n + 1}.deltacommit": 0.0 for n in (3, 5, 7)}}
    assert not needs_compaction(three, after_commits=4)
    assert needs_compaction(three, after_commits=3)
    planned = {**three, "009.compaction.requested": 0.0}
    assert needs_compaction(planned, after_commits=4)  # a pending compaction: always due


def _timeline(lake: Path, database: str, table: str, instants: list[str]) -> None:
    """A local Hudi table's timeline with these completed instants (file names only)."""
    timeline = timeline_folder(lake / database / table)
    timeline.mkdir(parents=True)
    (timeline.parent / TABLE_PROPERTIES).write_text("hoodie.table.name=" + table)
    for name in instants:
        (timeline / name).write_text("")


def test_under_a_stream_one_table_at_a_time_is_maintained_once_its_delta_commits_are_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`maintain_one` picks the first table past `stream_compaction_commits`, and only it."""
    lake = tmp_path / "lake"
    conf = dataclasses.replace(settings_for(tmp_path, lake), stream_compaction_commits=3)
    tables = tables_for("stream", ("listing", "sales", "users"), table_type="mor")
    for table, commits in (("listing", 2), ("sales", 3), ("users", 4)):
        deltas = [f"{n:03d}_{n + 1:03d}.deltacommit" for n in range(3, 3 + 2 * commits, 2)]
        _timeline(lake, "stream", table, ["001_002.commit", *deltas])
        _timeline(lake, "stream", f"{table}_changelog", [])
    calls: list[tuple[str, int]] = []

    def maintain_table(spark, conf, table, compaction_commits=1) -> Maintained:
        calls.append((table.name, compaction_commits))
        return Maintained(table.name, compacted=True, clustered=False, seconds=0.0)

    monkeypatch.setattr(maintenance, "maintain_table", maintain_table)
    done = maintenance.maintain_one(None, conf, tables, log=lambda _: None)
    assert done is not None and done.table == "sales"
    assert calls == [("sales", 3)]  # listing is not due; users waits for the next one
    assert maintenance.due_tables(conf, tables) == tables  # idle: any delta commit is due


def test_maintenance_clusters_a_changelog_after_its_commits_or_while_a_clustering_is_pending() -> (
    None
):
    """On a changelog (copy-on-write) a `commit` is a write, a `replacecommit` a clustering."""
    written = {"001_002.commit": 0.0, "003_004.commit": 0.0}
    assert not needs_clustering(written, after_commits=3)
    assert needs_clustering(written, after_commits=2)
    clustered = {**written, "005_006.replacecommit": 0.0, "007_008.commit": 0.0}
    assert not needs_clustering(clustered, after_commits=2)
    pending = {**clustered, "009.clustering.requested": 0.0, "009.clustering.inflight": 0.0}
    assert needs_clustering(pending, after_commits=2)
    assert not needs_clustering({**pending, "009_010.replacecommit": 0.0}, after_commits=2)
