"""Faults a CDC pipeline meets: late and duplicate events, bad records, deletes, MOR."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import fastavro
import pytest

from ingestion import commits
from ingestion.config import load_tables
from ingestion.hudi_timeline import META_FOLDER, TABLE_PROPERTIES, timeline_folder
from ingestion.maintenance import maintain
from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri
from ingestion.table_state import read_state
from lakehouse.cdc.generate import GenerateOptions, generate

from .bronze import (
    BLOOM_FILTER,
    differences,
    expected,
    footer_keys,
    key_of,
    make_landing,
    run_ingest,
    settings_for,
    spark_rows,
    tables_for,
)

CATEGORY_TOPIC = "tickit.ems.category"
# An LSN past every position the generator writes, so crafted changes are the newest.
NEWER = 10**16


def topic_files(landing: Path, topic: str, suffix: str = "json") -> list[Path]:
    return sorted(
        (landing / "topics" / topic).rglob(f"*.{suffix}"), key=lambda p: int(p.stem.split("+")[2])
    )


def write_lines(landing: Path, topic: str, offset: int, lines: list[str]) -> Path:
    folder = landing / "topics" / topic / "year=2024" / "month=04" / "day=01"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{topic}+0+{offset:010d}.json"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def category_update(template: dict, catid: int, catname: str, lsn: int) -> str:
    """A Debezium update of one category, as JsonConverter writes it."""
    event = copy.deepcopy(template)
    payload = event["payload"]
    before = copy.deepcopy(payload["after"])
    payload["before"] = before
    payload["after"] = {**before, "catid": catid, "catname": catname}
    payload["before"]["catid"] = catid
    payload["op"] = "u"
    payload["source"] = {**payload["source"], "lsn": lsn, "snapshot": "false"}
    return json.dumps(event)


def category_delete(template: dict, catid: int, lsn: int) -> str:
    """A Debezium delete of one category, as JsonConverter writes it."""
    event = copy.deepcopy(template)
    payload = event["payload"]
    payload["before"] = {**payload["after"], "catid": catid}
    payload["after"] = None
    payload["op"] = "d"
    payload["source"] = {**payload["source"], "lsn": lsn, "snapshot": "false"}
    return json.dumps(event)


@pytest.fixture
def category_landing(tmp_path: Path) -> tuple[Path, dict]:
    """A snapshot-only landing zone; returns it and one category event to copy."""
    landing = make_landing(tmp_path / "landing", change_batches=0)
    first = topic_files(landing, CATEGORY_TOPIC)[0]
    return landing, json.loads(first.read_text().splitlines()[0])


def category_rows(spark, conf, database: str) -> dict[int, dict]:
    return {r["catid"]: r for r in spark_rows(spark, conf, database, "category")}


def test_batches_are_applied_one_at_a_time(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=1)
    conf = settings_for(landing, tmp_path / "lake")
    tables = tables_for("faults_batches", ("sales", "users"))
    first = run_ingest(spark, conf, tables)
    after_first = spark_rows(spark, conf, "faults_batches", "sales")
    assert differences(after_first, expected(landing, "sales"), "salesid") == []

    summary = generate(GenerateOptions(out=str(landing), scale=0.01, change_batches=3))
    new_sales_files = sum(f.topic == "tickit.ecomm.sale" and f.batch >= 2 for f in summary.files)
    second = run_ingest(spark, conf, tables)
    assert second["sales"].files == new_sales_files
    assert first["sales"].files + second["sales"].files == len(
        topic_files(landing, "tickit.ecomm.sale")
    )
    for table in ("sales", "users"):
        rows = spark_rows(spark, conf, "faults_batches", table)
        assert differences(rows, expected(landing, table), key_of(table)) == [], table
    # The column added in batch 2 is in the table; rows written before read it as null.
    check_time_travel_and_incremental(spark, conf, after_first)
    users = spark_rows(spark, conf, "faults_batches", "users")
    assert "loyaltytier" in users[0]
    assert all(r["loyaltytier"] is None for r in users if r["_cdc_op"] == "r")


def check_time_travel_and_incremental(spark, conf, after_first: list[dict]) -> None:
    """As of the first commit: the first state; incrementally since it: only what changed."""
    # (requested instant, completion time) of each commit, oldest first.
    commits = sorted(
        (r["commit_time"], r["state_transition_time"])
        for r in spark.sql(
            "call show_commits(table => 'faults_batches.sales', limit => 10)"
        ).collect()
    )
    assert len(commits) == 2
    path = to_hadoop_uri(table_path(conf, "faults_batches", "sales"))
    as_of = spark.read.format("hudi").option("as.of.instant", commits[0][0]).load(path)
    state = lambda rows: {(r["salesid"], r["_cdc_position"]) for r in rows}  # noqa: E731
    assert state(as_of.collect()) == state(after_first)
    changed = (
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "incremental")
        # Hudi 1.x reads incrementally by completion time, the start excluded.
        .option("hoodie.datasource.read.begin.instanttime", commits[0][1])
        .load(path)
    )
    final = spark_rows(spark, conf, "faults_batches", "sales")
    assert state(changed.collect()) == state(final) - state(after_first)


def test_late_and_duplicate_events_never_win(spark, category_landing, tmp_path: Path) -> None:
    landing, template = category_landing
    base = NEWER
    # Within one file: the newer change first, then an older one and a redelivery.
    write_lines(landing, CATEGORY_TOPIC, 100, [
        category_update(template, 1, "newest", base + 30),
        category_update(template, 1, "older", base + 10),
        category_update(template, 1, "newest", base + 30),
    ])  # fmt: skip
    conf = settings_for(landing, tmp_path / "lake")
    tables = tables_for("faults_order", ("category",))
    run_ingest(spark, conf, tables)
    assert category_rows(spark, conf, "faults_order")[1]["catname"] == "newest"

    # Across batches: a later file with an older position changes nothing.
    write_lines(landing, CATEGORY_TOPIC, 200, [category_update(template, 1, "stale", base + 20)])
    result = run_ingest(spark, conf, tables)
    assert result["category"].committed
    rows = category_rows(spark, conf, "faults_order")
    assert rows[1]["catname"] == "newest"
    assert rows[1]["_cdc_position"] == str(base + 30).rjust(20, "0")
    changelog = spark_rows(spark, conf, "faults_order", "category_changelog")
    # Every distinct event kept once: the snapshot read, newest, older and stale.
    history = sorted((r["_cdc_position"], r["catname"]) for r in changelog if r["catid"] == 1)
    assert [name for _, name in history][1:] == ["older", "stale", "newest"]
    assert len(history) == 4 and history[0][0] < str(NEWER)


def commits_written(table: Path) -> list[tuple[str, int]]:
    """Each completed commit's operation and rows written, oldest first, from Hudi's metadata."""
    found = []
    for path in sorted(timeline_folder(table).glob("*_*.commit")):
        with path.open("rb") as avro:
            [metadata] = list(fastavro.reader(avro))
        stats = (metadata.get("partitionToWriteStats") or {}).values()
        written = sum(stat["numWrites"] for partition in stats for stat in partition)
        found.append((metadata["operationType"], written))
    return found


class FailedBulkInsert(RuntimeError):
    """Stands for a crash at a batch's changelog commit."""


def test_the_changelog_looks_up_only_events_a_batch_may_repeat(
    spark, category_landing, tmp_path: Path, monkeypatch
) -> None:
    """Past the last stored position: bulk-inserted. A redelivery: left out by its id, kept once."""
    landing, template = category_landing
    conf = settings_for(landing, tmp_path / "lake")
    tables = tables_for("faults_positions", ("category",))
    changelog = Path(table_path(conf, "faults_positions", "category_changelog"))
    run_ingest(spark, conf, tables)
    first = category_update(template, 1, "first", NEWER + 10)
    write_lines(landing, CATEGORY_TOPIC, 100, [first])
    run_ingest(spark, conf, tables)
    write_lines(
        landing, CATEGORY_TOPIC, 200, [first, category_update(template, 2, "second", NEWER + 20)]
    )
    # Killed at the batch's changelog commit: the rerun reads the whole batch again.
    write = commits.hudi_writer.write

    def failing(frame, path: str, options, operation: str, new_table: bool) -> None:
        if operation == "bulk_insert" and path.endswith("category_changelog"):
            raise FailedBulkInsert
        write(frame, path, options, operation, new_table)

    monkeypatch.setattr(commits.hudi_writer, "write", failing)
    with pytest.raises(FailedBulkInsert):
        run_ingest(spark, conf, tables)
    monkeypatch.undo()
    run_ingest(spark, conf, tables)
    # The redelivered event is left out, nothing rewritten: each batch one file of its own.
    written = commits_written(changelog)
    assert written[1:] == [("BULK_INSERT", 1), ("BULK_INSERT", 1)]
    state = read_state(spark, str(changelog), CATEGORY_TOPIC, details=False)
    assert state.last_position == str(NEWER + 20).rjust(20, "0")
    # A changelog whose commits do not record the position has it read from its rows.
    monkeypatch.setattr("ingestion.table_state.LAST_POSITION_KEY", "lakehouse.not_recorded")
    write_lines(landing, CATEGORY_TOPIC, 300, [category_update(template, 3, "third", NEWER + 30)])
    run_ingest(spark, conf, tables)
    assert commits_written(changelog)[-1][0] == "BULK_INSERT"
    rows = spark_rows(spark, conf, "faults_positions", "category_changelog")
    changes = sorted(r["catname"] for r in rows if r["_cdc_op"] == "u")
    assert changes == ["first", "second", "third"]
    assert len(rows) == len({r["_cdc_event_id"] for r in rows})
    assert {
        r["catid"]: r["catname"]
        for r in category_rows(spark, conf, "faults_positions").values()
        if r["catid"] <= 3
    } == {1: "first", 2: "second", 3: "third"}


def test_bad_records_are_quarantined_and_the_rest_applied(
    spark, category_landing, tmp_path: Path
) -> None:
    landing, template = category_landing
    no_key = json.loads(category_update(template, 2, "no key", NEWER))
    no_key["payload"]["after"]["catid"] = None
    unknown_op = json.loads(category_update(template, 3, "unknown op", NEWER))
    unknown_op["payload"]["op"] = "x"
    narrowed = json.loads(category_update(template, 4, "narrowed", NEWER))
    for part in narrowed["schema"]["fields"][:2]:  # before, after: catid int16 -> string
        next(f for f in part["fields"] if f["field"] == "catid")["type"] = "string"
    narrowed["payload"]["after"]["catid"] = "four"
    bad_file = write_lines(landing, CATEGORY_TOPIC, 100, [
        category_update(template, 5, "good", NEWER),
        "this is not json",
        json.dumps(no_key),
        json.dumps(unknown_op),
        json.dumps(narrowed),
        "null",
    ])  # fmt: skip
    avro_file = corrupt_avro_file(tmp_path, landing)

    conf = settings_for(landing, tmp_path / "lake")
    result = run_ingest(spark, conf, tables_for("faults_bad", ("category",)))["category"]
    assert result.quarantined == 5
    assert result.tombstones == 1
    rows = category_rows(spark, conf, "faults_bad")
    assert rows[5]["catname"] == "good"
    assert rows[6]["catname"] == "from avro"  # the block after the corrupt one
    assert rows[4]["catname"] != "narrowed"

    quarantine = spark.read.format("hudi").load(
        to_hadoop_uri(table_path(conf, "faults_bad", QUARANTINE))
    )
    reasons = {(Path(r["source_file"]).name, r["line"]): r["reason"] for r in quarantine.collect()}
    assert reasons[(bad_file.name, 1)] == "line is not a JSON object"
    assert reasons[(bad_file.name, 2)] == "event has no value for key column(s) catid"
    assert reasons[(bad_file.name, 3)] == "unknown op 'x'"
    assert reasons[(bad_file.name, 4)].startswith("incompatible schema change: catid")
    avro_reasons = [v for (name, _), v in reasons.items() if name == avro_file.name]
    assert len(avro_reasons) == 1 and avro_reasons[0].startswith("corrupt Avro block")
    raw = {r["line"]: r["raw"] for r in quarantine.collect() if bad_file.name in r["source_file"]}
    assert raw[1] == "this is not json"


def corrupt_avro_file(tmp_path: Path, landing: Path) -> Path:
    """An Avro landing file of three blocks whose middle block is damaged."""
    avro_landing = make_landing(tmp_path / "avro", change_batches=0, format="avro")
    source = topic_files(avro_landing, CATEGORY_TOPIC, "avro")[0]
    with source.open("rb") as handle:
        reader = fastavro.reader(handle)
        schema, records = reader.writer_schema, list(reader)
    update = copy.deepcopy(records[0])
    update["before"] = copy.deepcopy(update["after"])
    update["after"]["catid"] = update["before"]["catid"] = 6
    update["after"]["catname"] = "from avro"
    update["op"] = "u"
    update["source"]["lsn"] = NEWER + 5
    target = landing / "topics" / CATEGORY_TOPIC / "year=2024" / "month=04" / "day=02"
    target.mkdir(parents=True)
    path = target / f"{CATEGORY_TOPIC}+0+0000000200.avro"
    with path.open("wb") as out:
        writer = fastavro.write.Writer(out, fastavro.parse_schema(schema), sync_interval=10**6)
        for block in (records[:2], records[2:4], [update]):
            for record in block:
                writer.write(record)
            writer.flush()
    with path.open("rb") as handle:
        sync = fastavro.reader(handle)._header["sync"]
    data = bytearray(path.read_bytes())
    second = data.index(sync, data.index(sync) + 16) + 16  # start of the middle block
    data[second + 4 : second + 40] = b"\xff" * 36
    path.write_bytes(bytes(data))
    return path


def test_hard_deletes_remove_keys_and_soft_deletes_keep_them(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    conf = settings_for(landing, tmp_path / "lake")
    run_ingest(spark, conf, tables_for("faults_hard", ("sales",), delete_mode="hard"))
    wanted = expected(landing, "sales")
    deleted = {r["salesid"] for r in wanted if r["_deleted"]}
    assert deleted
    rows = spark_rows(spark, conf, "faults_hard", "sales")
    assert {r["salesid"] for r in rows} == {r["salesid"] for r in wanted} - deleted
    live = [r for r in wanted if not r["_deleted"]]
    assert differences(rows, live, "salesid") == []


def file_groups(folder: Path) -> set[str]:
    """The file ids of a Hudi table's base and log files; a bucket's starts with its number."""
    base = {p.name.split("_")[0] for p in folder.glob("*.parquet")}
    logs = {p.name[1:].split("_")[0] for p in folder.glob(".*.log.*") if p.suffix != ".crc"}
    return base | logs


def bucket_numbers(folder: Path) -> list[str]:
    return sorted({file_id[:8] for file_id in file_groups(folder)})


def test_merge_on_read_gives_the_copy_on_write_snapshot(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=0)
    conf = settings_for(landing, tmp_path / "lake")
    names = ("category", "sales", "users")
    tables = tables_for("faults_mor", names, table_type="mor")
    run_ingest(spark, conf, tables)
    make_landing(landing, change_batches=3)
    run_ingest(spark, conf, tables)
    for table in names:
        assert load_tables()[table].table_type == "cow"
        rows = spark_rows(spark, conf, "faults_mor", table)
        assert differences(rows, expected(landing, table), key_of(table)) == [], table
    sales = Path(table_path(conf, "faults_mor", "sales"))
    properties = sales / META_FOLDER / TABLE_PROPERTIES
    assert "hoodie.table.type=MERGE_ON_READ" in properties.read_text()
    # The change batches went to the buckets' log files, one file group per bucket.
    assert any(".log." in p.name for p in sales.iterdir())
    assert len(file_groups(sales)) == load_tables()["sales"].buckets == 4
    assert bucket_numbers(sales) == ["00000000", "00000001", "00000002", "00000003"]
    # Compacted, every table still exact.
    snapshot = set(sales.glob("*.parquet"))
    assert compacted(spark, conf, tables) == [True, True, True]
    for table in names:
        rows = spark_rows(spark, conf, "faults_mor", table)
        assert differences(rows, expected(landing, table), key_of(table)) == [], table
    # The compaction's base files carry no key filter, as bronze's upserts write none
    # (decision 0008); the snapshot's bulk insert (Hudi's row writer) always writes one.
    compacted_files = set(sales.glob("*.parquet")) - snapshot
    assert len(compacted_files) == 4
    assert all(BLOOM_FILTER not in footer_keys(spark, file) for file in compacted_files)
    assert all(BLOOM_FILTER in footer_keys(spark, file) for file in snapshot)


def test_a_bucketed_table_keeps_one_file_group_per_bucket(spark, tmp_path: Path) -> None:
    """Copy-on-write with buckets: every commit rewrites buckets, never adds file groups."""
    landing = make_landing(tmp_path / "landing", change_batches=3)
    conf = settings_for(landing, tmp_path / "lake")
    run_ingest(spark, conf, tables_for("faults_buckets", ("sales",)))
    rows = spark_rows(spark, conf, "faults_buckets", "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    sales = Path(table_path(conf, "faults_buckets", "sales"))
    assert bucket_numbers(sales) == ["00000000", "00000001", "00000002", "00000003"]
    assert len(file_groups(sales)) == 4
    assert read_state(spark, str(sales), "tickit.ecomm.sale").buckets == 4


def test_an_existing_table_keeps_its_layout_when_the_config_changes(
    spark, tmp_path: Path, caplog
) -> None:
    """Buckets asked for after the table was created would misplace its keys: not applied."""
    landing = make_landing(tmp_path / "landing", change_batches=0)
    conf = settings_for(landing, tmp_path / "lake")
    run_ingest(spark, conf, tables_for("faults_layout", ("sales",), buckets=None))
    make_landing(landing, change_batches=2)
    commits._warn_kept_layout.cache_clear()  # said once per process: maybe by a test before
    with caplog.at_level("WARNING"):
        assert run_ingest(spark, conf, tables_for("faults_layout", ("sales",)))["sales"].committed
    rows = spark_rows(spark, conf, "faults_layout", "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    sales = Path(table_path(conf, "faults_layout", "sales"))
    assert read_state(spark, str(sales), "tickit.ecomm.sale").buckets is None
    assert "00000001" not in bucket_numbers(sales)
    assert "sales: the bronze table is copy-on-write with a global index and stays so" in (
        caplog.text
    )


def test_truncate_can_be_ignored(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=2)
    conf = settings_for(landing, tmp_path / "lake")
    run_ingest(spark, conf, tables_for("faults_truncate", ("category",), truncate="ignore"))
    rows = spark_rows(spark, conf, "faults_truncate", "category")
    assert rows and not any(r["_cdc_is_deleted"] for r in rows)
    assert not any(r["_cdc_op"] == "t" for r in rows)


def compacted(spark, conf, tables) -> list[bool]:
    return [m.compacted for m in maintain(spark, conf, tables, log=lambda _: None)]


@pytest.mark.parametrize("delete_mode", ["soft", "hard"])
def test_a_stale_delete_never_removes_a_newer_row_on_merge_on_read(
    spark, category_landing, tmp_path: Path, delete_mode: str
) -> None:
    """An older delete arriving after a newer update (the apache/hudi#19978 class) loses.

    It lands in a log file of its own, then against the compacted base file;
    each time the snapshot is read before and after the compaction merges it.
    A delete newer than the row's state applies throughout.
    """
    landing, template = category_landing
    conf = settings_for(landing, tmp_path / "lake")
    database = f"faults_stale_{delete_mode}"
    tables = tables_for(database, ("category",), table_type="mor", delete_mode=delete_mode)
    run_ingest(spark, conf, tables)
    write_lines(landing, CATEGORY_TOPIC, 100, [
        category_update(template, 1, "newest", NEWER + 30),
        category_delete(template, 2, NEWER + 30),
    ])  # fmt: skip
    run_ingest(spark, conf, tables)

    def check() -> None:
        rows = category_rows(spark, conf, database)
        assert (rows[1]["catname"], rows[1]["_cdc_is_deleted"]) == ("newest", False)
        assert rows[1]["_cdc_position"] == str(NEWER + 30).rjust(20, "0")
        if delete_mode == "hard":
            assert 2 not in rows
        else:
            assert rows[2]["_cdc_is_deleted"] is True

    for offset, stale in ((200, NEWER + 10), (300, NEWER + 20)):
        write_lines(landing, CATEGORY_TOPIC, offset, [category_delete(template, 1, stale)])
        assert run_ingest(spark, conf, tables)["category"].committed
        check()
        assert compacted(spark, conf, tables) == [True]
        check()
    assert compacted(spark, conf, tables) == [False]  # nothing new since: nothing to do


def test_merge_on_read_bronze_is_registered_with_its_ro_and_rt_views(
    spark, category_landing, tmp_path: Path
) -> None:
    """`_rt` (and the base name) read the log files; `_ro` the base files, up to compaction."""
    landing, template = category_landing
    conf = settings_for(landing, tmp_path / "lake")
    tables = tables_for("faults_views", ("category",), table_type="mor")
    run_ingest(spark, conf, tables)
    snapshot = category_rows(spark, conf, "faults_views")[1]["catname"]
    write_lines(landing, CATEGORY_TOPIC, 100, [category_update(template, 1, "logged", NEWER)])
    run_ingest(spark, conf, tables)

    def name_of_1(view: str) -> str:
        query = f"select catname from faults_views.{view} where catid = 1"
        return spark.sql(query).first().catname

    assert [name_of_1(v) for v in ("category", "category_rt", "category_ro")] == [
        "logged", "logged", snapshot,
    ]  # fmt: skip
    assert compacted(spark, conf, tables) == [True]
    # The session forgot what it had listed of each name: the next query lists anew.
    cached = spark._jsparkSession.sessionState().catalog()
    for name in ("category", "category_rt", "category_ro"):
        key = spark._jvm.org.apache.spark.sql.catalyst.QualifiedTableName("faults_views", name)
        assert cached.getCachedTable(key) is None, name
    assert name_of_1("category_ro") == "logged"
    # A copy-on-write table has no views to add.
    cow = tables_for("faults_views", ("venue",))
    run_ingest(spark, conf, cow)
    names = {t.name for t in spark.catalog.listTables("faults_views")}
    assert names >= {"category", "category_ro", "category_rt", "venue"}
    assert not names & {"venue_ro", "venue_rt"}
