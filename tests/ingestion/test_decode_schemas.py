"""The decoder finds a batch's schema versions, and whether any event has none, in one job.

A batch where every event carries its JsonConverter schema runs no job looking
for schemaless columns (0.15 to 0.7 s per table and batch, warm); a batch with one
schemaless event still has its undeclared column found and typed from the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from ingestion.decode import events
from ingestion.decode.events import DecodeSpec, classify, decode, read_lines
from ingestion.kept import release

from .debezium_events import dumps, envelope, field

FIELDS = [field("id", "int32"), field("name", "string")]
SCHEMALESS = {"before": None, "after": {"id": 9, "name": "n9", "extra": 7},
              "source": {"connector": "mysql", "file": "mysql-bin.000001", "pos": 4, "row": 0},
              "op": "c"}  # fmt: skip


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


def decoded(spark, path: Path, lines: list[str]) -> tuple[dict[str, str], list[tuple]]:
    """The batch's column types and its (id, name) rows."""
    write_lines(path, lines)
    batch = decode(classify(read_lines(spark, [str(path)], [])), DecodeSpec("any", ("id",)), "")
    try:
        rows = sorted(tuple(r) for r in batch.events.select("id", "name").collect())
        return {name: kind.spark_type for name, kind in batch.columns.items()}, rows
    finally:
        release(batch.lines)


def test_schemaless_columns_are_looked_for_only_when_an_event_has_no_schema(
    spark, tmp_path: Path, monkeypatch
) -> None:
    looked = []
    find = events._schemaless_columns
    monkeypatch.setattr(
        events, "_schemaless_columns", lambda *args: looked.append(1) or find(*args)
    )
    with_schema = [dumps(envelope(FIELDS, {"id": i, "name": f"n{i}"}, 10 + i)) for i in range(3)]

    columns, rows = decoded(spark, tmp_path / "typed.json", with_schema)
    assert looked == []
    assert columns == {"id": "int", "name": "string"}
    assert rows == [(0, "n0"), (1, "n1"), (2, "n2")]

    columns, rows = decoded(spark, tmp_path / "mixed.json", [*with_schema, json.dumps(SCHEMALESS)])
    assert looked == [1]
    assert columns == {"id": "int", "name": "string", "extra": "bigint"}
    assert rows == [(0, "n0"), (1, "n1"), (2, "n2"), (9, "n9")]


def test_lines_keep_a_schemas_hash_and_each_version_is_read_from_its_first_line(
    spark, tmp_path: Path
) -> None:
    # The kept lines hold no schema text (1.2 KB of a TICKIT line's 1.5 KB);
    # the versions, in source order, still come whole from the lines' own text.
    wider = [*FIELDS, field("extra", "int64")]
    lines = [dumps(envelope(wider, {"id": 2, "name": "n2", "extra": 7}, 12)),
             dumps(envelope(FIELDS, {"id": 1, "name": "n1"}, 11))]  # fmt: skip
    path = tmp_path / "versions.json"
    write_lines(path, lines)
    classified = classify(read_lines(spark, [str(path)], []))
    kept = classified.select("schema", "has_schema", "schema_id").collect()
    assert [(r.schema, r.has_schema) for r in kept] == [(None, True), (None, True)]
    assert len({r.schema_id for r in kept}) == 2

    versions = events.batch_schemas(classified, DecodeSpec("any", ("id",))).versions
    assert [sorted(v.fields) for v in versions] == [["id", "name"], ["extra", "id", "name"]]
    assert [v.error for v in versions] == [None, None]
