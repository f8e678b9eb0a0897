"""Values Debezium's PostgreSQL connector could not read (TOAST) keep the value the key has.

Landing files of PostgreSQL change events, written here, carry Debezium's
placeholder (`__debezium_unavailable_value`, in the forms the connector's
UnchangedToastedPlaceholder gives each type) where an update left a TOASTed
`text`, `jsonb`, `bytea` or `text[]` value unchanged. Two batches are
ingested into a copy-on-write and a merge-on-read table; bronze and the
changelog, read back with Spark, hold the real values, never the placeholder.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from ingestion.config import Source, TableConfig
from ingestion.engine import ingest
from ingestion.settings import Settings

from .bronze import settings_for, spark_rows
from .debezium_events import dumps, envelope, field

PLACEHOLDER = "__debezium_unavailable_value"
TOPIC = "shop.public.docs"
FIELDS = [
    field("id", "int32"),
    field("qty", "int32"),
    field("note", "string"),  # text
    field("doc", "string", "io.debezium.data.Json"),  # jsonb
    field("data", "bytes"),  # bytea
    {"type": "array", "items": {"type": "string"}, "optional": True, "field": "tags"},  # text[]
]
COLUMNS = ("note", "doc", "data", "tags")
# Debezium's placeholder per column, as the connector sends it in JSON.
UNAVAILABLE = {
    "note": PLACEHOLDER,
    "doc": PLACEHOLDER,
    "data": base64.b64encode(PLACEHOLDER.encode()).decode(),
    "tags": [PLACEHOLDER],
}
U = object()  # stands for the placeholder in the events below


@dataclass(frozen=True)
class Event:
    """One change of row `id`: its values (U for the placeholder) and what must be stored."""

    id: int
    lsn: int
    op: str
    values: dict  # column -> value sent (None, a value, or U)
    stored: dict  # column -> value bronze and the changelog must hold for this event


def row(note, doc, data, tags) -> dict:
    return {"note": note, "doc": doc, "data": data, "tags": tags}


N1 = "one " * 3000  # TOASTed at the source
D1 = '{"k": [1, 2]}'
B1 = b"\x00\x01\xffone"
T1 = ["a", "b"]
B2 = b"two-bytes"

FIRST = [
    Event(1, 100, "c", row(N1, D1, B1, T1), row(N1, D1, B1, T1)),
    Event(2, 110, "c", row("two", None, B2, None), row("two", None, B2, None)),
    Event(5, 120, "c", row("five", "{}", None, []), row("five", "{}", None, [])),
    # A genuine NULL update after a value: the next batch's placeholder keeps it NULL.
    Event(5, 130, "u", row(None, "{}", None, []), row(None, "{}", None, [])),
]
SECOND = [
    # Across batches: every column resolved from bronze's stored row.
    Event(1, 200, "u", row(U, U, U, U), row(N1, D1, B1, T1)),
    # Within the batch (note) and from bronze (data), in the same event.
    Event(2, 210, "u", row("two v2", None, U, None), row("two v2", None, B2, None)),
    Event(2, 220, "u", row(U, None, U, None), row("two v2", None, B2, None)),
    # Three events of a new key, the placeholder in the last two in a row.
    Event(
        3, 230, "c", row("three", '{"t": 3}', b"3", ["x"]), row("three", '{"t": 3}', b"3", ["x"])
    ),
    Event(3, 240, "u", row(U, U, U, U), row("three", '{"t": 3}', b"3", ["x"])),
    Event(3, 250, "u", row(U, U, U, U), row("three", '{"t": 3}', b"3", ["x"])),
    # A key nobody has seen: its value is unknown, so null (and reported).
    Event(4, 260, "u", row(U, "{}", None, None), row(None, "{}", None, None)),
    # A genuine NULL stored by the first batch stays NULL.
    Event(5, 270, "u", row(U, "{}", None, []), row(None, "{}", None, [])),
    # A genuine NULL earlier in the batch stays NULL.
    Event(6, 280, "c", row("six", None, None, None), row("six", None, None, None)),
    Event(6, 290, "u", row(None, None, None, None), row(None, None, None, None)),
    Event(6, 300, "u", row(U, None, None, None), row(None, None, None, None)),
]


def sent(event: Event) -> dict:
    """The event's `after` image as Debezium's JSON: placeholders, base64 bytes."""
    after = {"id": event.id, "qty": event.lsn}
    for column, value in event.values.items():
        if value is U:
            value = UNAVAILABLE[column]
        elif isinstance(value, bytes):
            value = base64.b64encode(value).decode()
        after[column] = value
    return after


def write_batch(landing: Path, offset: int, events: list[Event]) -> None:
    """One S3-sink file of the topic (partition 0, its start offset)."""
    folder = landing / "topics" / TOPIC
    folder.mkdir(parents=True, exist_ok=True)
    lines = [dumps(envelope(FIELDS, sent(e), e.lsn, e.op)) for e in events]
    (folder / f"{TOPIC}+0+{offset:010d}.json").write_text("\n".join(lines) + "\n")


def expected_value(column: str, value):
    """A value as bronze holds it: arrays as their compact JSON text, bytes as bytes."""
    if column == "tags" and value is not None:
        return json.dumps(value, separators=(",", ":"))
    return value


def stored(event: Event) -> dict:
    return {c: expected_value(c, v) for c, v in event.stored.items()}


def plain(row: dict) -> dict:
    return {c: bytes(row[c]) if isinstance(row[c], bytearray) else row[c] for c in COLUMNS}


def stored_rdds(spark) -> int:
    return spark.sparkContext._jsc.sc().getPersistentRDDs().size()


@dataclass
class Ingested:
    conf: Settings
    database: str
    logs: list[str]
    steps: list[set[str]]  # per run, the steps it took
    stored_after: int  # RDDs the runs left stored in the session's block manager


@pytest.fixture(scope="module", params=("cow", "mor"))
def ingested(request, spark, tmp_path_factory) -> Ingested:
    """The two batches, each ingested on its own run, into a table of the param's type."""
    root = tmp_path_factory.mktemp(f"toast-{request.param}")
    conf = settings_for(root / "landing", root / "lake")
    database = f"toast_{request.param}"
    table = TableConfig(
        name="docs",
        source=Source("shop", "postgresql"),
        topic=TOPIC,
        key=("id",),
        database=database,
        table_type=request.param,
    )
    logs: list[str] = []
    steps: list[set[str]] = []
    stored = stored_rdds(spark)
    for offset, events in ((0, FIRST), (len(FIRST), SECOND)):
        write_batch(Path(conf.landing), offset, events)
        result = ingest(spark, conf, [table], log=logs.append).tables[0]
        assert result.committed and result.quarantined == 0
        steps.append({timing.step for timing in result.profile})
    return Ingested(conf, database, logs, steps, stored_rdds(spark) - stored)


def test_bronze_keeps_the_stored_value_across_and_within_batches(ingested, spark) -> None:
    rows = spark_rows(spark, ingested.conf, ingested.database, "docs")
    found = {r["id"]: plain(r) for r in rows}
    latest = {e.id: stored(e) for e in FIRST + SECOND}  # in position order: the last wins
    assert found == latest


def test_every_changelog_row_carries_the_resolved_value(ingested, spark) -> None:
    rows = spark_rows(spark, ingested.conf, ingested.database, "docs_changelog")
    found = {(r["id"], r["qty"]): plain(r) for r in rows}
    assert found == {(e.id, e.lsn): stored(e) for e in FIRST + SECOND}


def test_the_placeholder_is_nowhere_in_bronze_or_the_changelog(ingested, spark) -> None:
    forms = {PLACEHOLDER, PLACEHOLDER.encode(), json.dumps([PLACEHOLDER], separators=(",", ":"))}
    for name in ("docs", "docs_changelog"):
        rows = spark_rows(spark, ingested.conf, ingested.database, name)
        assert [r["id"] for r in rows for c in COLUMNS if plain(r)[c] in forms] == [], name


def test_a_key_never_stored_gets_null_and_is_reported(ingested) -> None:
    assert ingested.logs[-1] == (
        "docs: 18 value(s) Debezium could not read (TOAST) resolved; "
        "never stored before, so stored as null: note 1"
    )


def test_the_resolved_events_are_freed_after_the_commits(ingested) -> None:
    assert ingested.stored_after == 0


def test_a_batch_without_the_placeholder_takes_no_step_for_it(ingested) -> None:
    """Found by the counting job every batch runs anyway: no Spark job of its own."""
    assert [("unavailable values" in steps) for steps in ingested.steps] == [False, True]
