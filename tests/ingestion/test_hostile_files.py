"""Hostile files in the landing zone: each ignored or quarantined with a reason, the rest applied.

One run over a TICKIT topic folder that also holds a zero-byte file, lines
that are not UTF-8, a 50 MB single line, a million tombstones, files whose
names are not in the sink layout and unrelated files. Ignored files are
logged with the reason (`ingestion.sources.landing`); bad lines become
quarantine rows with theirs; the table ends in the generator's expected
state, and a rerun commits nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri
from ingestion.sources import landing

from .bronze import differences, expected, make_landing, run_ingest, settings_for, spark_rows
from .bronze import tables_for as bronze_tables

TOPIC = "tickit.ems.category"
DATABASE = "hostile"
FIFTY_MB = 50 * 1024 * 1024
TOMBSTONES = 1_000_000
# A category update that would change the table if it were ever applied.
APPLIABLE = (
    b'{"payload": {"op": "u", "before": null, "after": {"catid": 1, "catname": "must not apply"}, '
    b'"source": {"lsn": 99999999999999999, "connector": "postgresql"}, "ts_ms": 1}}\n'
)


def _sink_file(folder: Path, offset: int, data: bytes) -> Path:
    path = folder / f"{TOPIC}+0+{offset:010d}.json"
    path.write_bytes(data)
    return path


def hostile_files(landing: Path) -> dict[str, Path]:
    """Write the hostile files next to the topic's own; return them by case."""
    folder = landing / "topics" / TOPIC / "year=2030" / "month=01" / "day=01"
    folder.mkdir(parents=True)
    base = 10**9
    files = {
        "zero bytes": _sink_file(folder, base + 1, b""),
        "non-UTF-8": _sink_file(folder, base + 2, b'{"catname": "caf\xe9"}\n\xff\xfe\x00\x81\n'),
        "50 MB line": _sink_file(folder, base + 3, b'{"payload": "' + b"x" * FIFTY_MB + b"\n"),
        "tombstones": _sink_file(folder, base + 4, b"null\n" * TOMBSTONES),
        "name not in the layout": folder / f"{TOPIC}+0+{base + 5}.json.tmp",
        "bad offset": folder / f"{TOPIC}+0+x{base + 6}.json",
        "other topic's file": folder / f"tickit.ems.venue+0+{base + 7:010d}.json",
        "unrelated": landing / "topics" / TOPIC / "README.txt",
    }
    for case in ("name not in the layout", "bad offset", "other topic's file", "unrelated"):
        files[case].write_bytes(APPLIABLE)
    return files


def _tombstones_landed(landing: Path) -> int:
    """Tombstones the generator wrote for the topic (before the hostile files)."""
    return sum(
        line.strip() == b"null"
        for path in (landing / "topics" / TOPIC).rglob("*.json")
        for line in path.read_bytes().splitlines()
    )


def _quarantine(spark, conf) -> dict[tuple[str, int], tuple[str, int]]:
    """(file name, line) -> (reason, length of the raw line) of every quarantine row."""
    frame = spark.read.format("hudi").load(to_hadoop_uri(table_path(conf, DATABASE, QUARANTINE)))
    rows = frame.selectExpr("source_file", "line", "reason", "octet_length(raw) as size").collect()
    return {(Path(r.source_file).name, r.line): (r.reason, r.size) for r in rows}


def test_hostile_files_are_ignored_or_quarantined_and_the_rest_applied(
    spark, tmp_path: Path, caplog
) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=1)
    generated = _tombstones_landed(landing)
    files = hostile_files(landing)
    conf = settings_for(landing, tmp_path / "lake")
    tables = bronze_tables(DATABASE, ("category",))
    with caplog.at_level(logging.WARNING, logger="ingestion.sources.landing"):
        result = run_ingest(spark, conf, tables)["category"]

    rows = spark_rows(spark, conf, DATABASE, "category")
    assert differences(rows, expected(landing, "category"), "catid") == []
    assert result.tombstones == generated + TOMBSTONES
    assert result.quarantined == 3
    bad_utf8, big = files["non-UTF-8"].name, files["50 MB line"].name
    assert _quarantine(spark, conf) == {
        (bad_utf8, 0): ("line is not valid UTF-8", 19),
        (bad_utf8, 1): ("line is not valid UTF-8", 4),
        (big, 0): ("line is not a JSON object", FIFTY_MB + 13),
    }
    warned = {(r.args[0].rsplit("/", 1)[-1], r.args[1]) for r in caplog.records}
    assert (files["zero bytes"].name, "empty file, no records") in warned
    for case in ("name not in the layout", "bad offset", "other topic's file", "unrelated"):
        assert (files[case].name, f"not a sink file of topic {TOPIC}") in warned, case

    again = run_ingest(spark, conf, tables)["category"]
    assert not again.committed and again.files == 0
    assert len(_quarantine(spark, conf)) == 3


def test_python_lists_a_local_landing_zone_as_hadoop_does(spark, tmp_path: Path) -> None:
    """The same paths and sizes whether Python or Hadoop's FileSystem lists a topic's folder.

    The paths reach checkpoints, `_cdc_source_file` and the quarantine's keys.
    """
    topic = "tickit.ems.category"
    folder = tmp_path / "topics" / topic / "year=2024" / "month=03"
    folder.mkdir(parents=True)
    (folder / f"{topic}+0+0000000000.json").write_text('{"a": 1}\n')
    (folder / f"{topic}+0+0000000007.json").write_text("")
    (folder / "README.txt").write_text("not a sink file")
    (folder / f".{topic}+0+0000000000.json.crc").write_bytes(b"crc")  # Hadoop hides these
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"{topic}+1+0000000003.json").write_text("{}\n")
    (folder / "linked").symlink_to(elsewhere, target_is_directory=True)
    local = sorted(landing.local_statuses(tmp_path / "topics" / topic))
    assert local == sorted(landing.hadoop_statuses(spark, str(tmp_path), topic))
    assert [size for _, size in local] == [15, 3, 9, 0]  # README.txt, linked/..., +0, +7
