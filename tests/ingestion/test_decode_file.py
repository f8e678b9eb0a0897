"""`lakehouse cdc decode`: any file, no table config, real connectors' events."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ingestion.decode.events import DecodeSpec, classify, decode, read_lines
from ingestion.decode.single_file import decode_file
from ingestion.kept import kept, release

from .bronze import make_landing
from .test_ingest_faults import topic_files

# A real Debezium 1.6 PostgreSQL update, schemaless (from the Pagila example in the seeds).
PAGILA_UPDATE = {
    "after": {"address": "733 Mandaluyong Place", "address2": "Apartment #1234",
              "phone": "196568435814", "district": "Asir",
              "last_update": "2021-08-13T00:43:38.508453Z", "address_id": 105,
              "postal_code": "77459", "city_id": 2},
    "source": {"schema": "public", "sequence": "[\"1090317720392\",\"1090317720392\"]",
               "xmin": None, "connector": "postgresql", "lsn": 1090317720624,
               "name": "pagila", "txId": 16973, "version": "1.6.1.Final",
               "ts_ms": 1628815418508, "snapshot": "false", "db": "pagila", "table": "address"},
    "op": "u", "ts_ms": 1628815418815,
}  # fmt: skip

# A Debezium 2.x MySQL delete, schemaless, from a binlog position.
MYSQL_DELETE = {
    "before": {"id": 7, "name": "gone"}, "after": None,
    "source": {"version": "2.4.2.Final", "connector": "mysql", "name": "shop",
               "ts_ms": 1700000000000, "snapshot": "false", "db": "shop", "table": "items",
               "server_id": 223344, "gtid": None, "file": "mysql-bin.000003", "pos": 154,
               "row": 0, "thread": 7},
    "op": "d", "ts_ms": 1700000000100,
}  # fmt: skip


def test_decodes_real_connector_events_without_config(spark, tmp_path: Path) -> None:
    path = tmp_path / "real.json"
    path.write_text(json.dumps(PAGILA_UPDATE) + "\n" + json.dumps(MYSQL_DELETE) + "\nnull\n")
    rows = [json.loads(line) for line in decode_file(spark, str(path))]
    pagila = next(r for r in rows if r.get("_cdc_source_db") == "pagila")
    assert pagila["address_id"] == 105  # inferred as a number
    assert pagila["_cdc_op"] == "u"
    assert pagila["_cdc_position"] == "00000001090317720624"
    assert pagila["_cdc_source_table"] == "public.address"
    assert pagila["_cdc_source_ts"].startswith("2021-08-13T00:43:38.508")
    deleted = next(r for r in rows if r.get("_cdc_source_db") == "shop")
    assert deleted["_cdc_is_deleted"] is True and deleted["name"] == "gone"
    assert deleted["_cdc_position"] == "0000000003:00000000000000000154:0000000000"
    assert len(rows) == 2  # the tombstone is skipped


def test_decodes_every_generated_format_with_types_from_the_schema(spark, tmp_path: Path) -> None:
    for fmt, ext in (("json", "json"), ("avro", "avro"), ("unwrapped", "json")):
        landing = make_landing(tmp_path / fmt, format=fmt, change_batches=0)
        first = topic_files(landing, "tickit.ecomm.sale", ext)[0]
        rows = [json.loads(line) for line in decode_file(spark, str(first), limit=3)]
        assert len(rows) == 3, fmt
        assert all(r["_cdc_op"] == "r" for r in rows), fmt
        assert isinstance(rows[0]["pricepaid"], float), fmt  # a decimal, not base64 text
        assert rows[0]["saletime"].startswith("20"), fmt


def test_lines_keep_their_file_order_across_scan_splits(spark, tmp_path: Path) -> None:
    # Files the scan cuts into many splits: each line keeps its number in its own
    # file, and the lines stay in as many partitions as the scan made (not the
    # four shuffle partitions that held a --scale 10 topic in 600 MiB each).
    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        path.write_text("".join(json.dumps({"n": n, "file": name}) + "\n" for n in range(2000)))
        paths.append(str(path))
    split_bytes = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")  # about 15 splits per file
    try:
        lines = read_lines(spark, paths, [])
        partitions = lines.rdd.getNumPartitions()
        rows = lines.select("file", "line", "raw").collect()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", split_bytes)
    assert partitions > int(spark.conf.get("spark.sql.shuffle.partitions"))
    assert len(rows) == 4000
    for row in rows:
        event = json.loads(row.raw)
        assert (Path(row.file).stem, row.line) == (event["file"], event["n"])


def test_events_and_rejects_are_filters_over_one_kept_decode(spark, tmp_path: Path) -> None:
    # Each line is decoded once: with the decoded rows kept, neither the events nor
    # the rejects parse JSON again (apart, each decoded every line, and in the filter
    # that Spark pushed below the decoding as well as after it), and their plans
    # start from the stored rows, not from the decoding's.
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(PAGILA_UPDATE) + "\n" + "not json\n")
    lines = classify(read_lines(spark, [str(path)], []))
    decoded = decode(lines, DecodeSpec(connector="any", key=()), ingested_at="2024-01-01")
    decoded = replace(decoded, rows=kept(decoded.rows))
    try:
        for frame in (decoded.events, decoded.rejects):
            plan = frame._jdf.queryExecution().optimizedPlan().toString()
            assert "LogicalRDD" in plan and "from_json" not in plan, plan
        assert [r.address_id for r in decoded.events.collect()] == [105]
        assert [(r.line, r.reason) for r in decoded.rejects.collect()] == [
            (1, "line is not a JSON object")
        ]
    finally:
        release(decoded.rows)
        release(decoded.lines)


def test_blank_lines_are_skipped_and_not_numbered(spark, tmp_path: Path) -> None:
    # Spark's trim removes spaces only: a line of spaces is blank, one that starts
    # with spaces and holds an event is not, nor is a line of a tab.
    path = tmp_path / "blank.json"
    path.write_text('\n   \n{"n": 0}\n\n  {"n": 1}\n\t\n{"n": 2}\n')
    rows = read_lines(spark, [str(path)], []).select("line", "raw").collect()
    assert [(r.line, r.raw) for r in rows] == [
        (0, '{"n": 0}'), (1, '  {"n": 1}'), (2, "\t"), (3, '{"n": 2}')
    ]  # fmt: skip


def test_an_unwrapped_row_takes_its_source_from_the_added_fields_only(
    spark, tmp_path: Path
) -> None:
    # ExtractNewRecordState's `__` fields are the source block; a table's own
    # columns named like source fields (`db`, `file`, `pos`) are just columns.
    row = {"id": 7, "db": "mine", "file": "x.000009", "pos": 99, "__op": "u",
           "__db": "shop", "__table": "items", "__file": "mysql-bin.000003", "__pos": 154,
           "__row": 0, "__source_ts_ms": 1700000000000, "__deleted": "false"}  # fmt: skip
    path = tmp_path / "unwrapped.json"
    path.write_text(json.dumps(row) + "\n")
    [decoded] = [json.loads(line) for line in decode_file(spark, str(path))]
    assert (decoded["db"], decoded["file"], decoded["pos"]) == ("mine", "x.000009", 99)
    assert decoded["_cdc_source_db"] == "shop"
    assert decoded["_cdc_source_table"] == "items"
    assert decoded["_cdc_position"] == "0000000003:00000000000000000154:0000000000"
