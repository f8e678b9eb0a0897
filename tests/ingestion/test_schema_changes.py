"""Schema changes a Debezium PostgreSQL connector publishes are followed in bronze, run after run.

Landing files of PostgreSQL change events, written here: a table snapshotted
with `qty integer` and `price numeric(10,2)`, then at the source `ALTER
COLUMN qty TYPE bigint`, `ALTER COLUMN price TYPE numeric(14,2)`, `DROP
COLUMN note`, `RENAME COLUMN old_name TO new_name` and `ALTER COLUMN price
TYPE numeric(16,4)`, each followed by changes and each ingested on a run of
its own. Bronze and the changelog,
read back with Spark after every run, hold the widened types and every row
(old rows written under the narrower types included) with its exact values;
nothing is quarantined. A change bronze cannot follow (an integer column
becoming text) quarantines only the events written under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from ingestion import resnapshot_journal
from ingestion.config import Source, TableConfig, load_tables
from ingestion.decode.types import FieldType, incompatibility, resolve_columns, widen
from ingestion.engine import ingest
from ingestion.errors import UserError
from ingestion.paths import QUARANTINE, table_path, to_hadoop_uri
from ingestion.settings import Settings
from lakehouse import dbt_sources, resnapshot

from .bronze import settings_for
from .debezium_events import decimal_field, dumps, envelope, field, unscaled_base64

TOPIC = "shop.public.t"
ID, NOTE, OLD, NEW = (
    field("id", "int32"),
    field("note", "string"),
    field("old_name", "string"),
    field("new_name", "string"),
)
QTY_INT, QTY_BIG = field("qty", "int32"), field("qty", "int64")
PRICE_10, PRICE_14 = decimal_field("price", 10, 2), decimal_field("price", 14, 2)
SNAPSHOT = [ID, QTY_INT, PRICE_10, NOTE, OLD]
QTY_BIGINT = [ID, QTY_BIG, PRICE_10, NOTE, OLD]
PRICE_WIDER = [ID, QTY_BIG, PRICE_14, NOTE, OLD]
NOTE_DROPPED = [ID, QTY_BIG, PRICE_14, OLD]
RENAMED = [ID, QTY_BIG, PRICE_14, NEW]
SCALED = [ID, QTY_BIG, decimal_field("price", 16, 4), NEW]


@dataclass(frozen=True)
class Change:
    """One event: its key, op, source position and the values of its `after` image."""

    id: int
    op: str
    lsn: int
    values: dict


def after(change: Change) -> dict:
    """The image as Debezium's JSON: decimals as base64 unscaled bytes."""
    out = {"id": change.id}
    for name, value in change.values.items():
        if isinstance(value, Decimal):
            value = unscaled_base64(int(value.scaleb(-value.as_tuple().exponent)))
        out[name] = value
    return out


def row(qty: int, price: str, note: str | None, old: str | None) -> dict:
    return {"qty": qty, "price": Decimal(price), "note": note, "old_name": old}


# Each run: the schema its events carry, its events, then bronze's rows and
# source column types after it. Run 1 is the snapshot.
RUNS = [
    (SNAPSHOT, [Change(1, "r", 100, row(1, "10.50", "a", "x1")),
                Change(2, "r", 110, row(2, "20.00", "b", "x2"))]),
    (QTY_BIGINT, [Change(1, "u", 200, row(5_000_000_000, "10.50", "a", "x1")),
                  Change(3, "c", 210, row(3, "30.25", "c", "x3"))]),
    (PRICE_WIDER, [Change(2, "u", 300, row(2, "123456789012.34", "b", "x2"))]),
    (NOTE_DROPPED, [Change(1, "u", 400, {"qty": 6_000_000_000, "price": Decimal("11.00"),
                                          "old_name": "x1"})]),
    (RENAMED, [Change(3, "u", 500, {"qty": 4, "price": Decimal("30.25"), "new_name": "y3"})]),
    (SCALED, [Change(3, "u", 600, {"qty": 4, "price": Decimal("30.2575"), "new_name": "y3"})]),
]  # fmt: skip
BRONZE = [
    {1: (1, "10.50", "a", "x1"), 2: (2, "20.00", "b", "x2")},
    {1: (5_000_000_000, "10.50", "a", "x1"), 2: (2, "20.00", "b", "x2"),
     3: (3, "30.25", "c", "x3")},
    {1: (5_000_000_000, "10.50", "a", "x1"), 2: (2, "123456789012.34", "b", "x2"),
     3: (3, "30.25", "c", "x3")},
    {1: (6_000_000_000, "11.00", None, "x1"), 2: (2, "123456789012.34", "b", "x2"),
     3: (3, "30.25", "c", "x3")},
    {1: (6_000_000_000, "11.00", None, "x1", None), 2: (2, "123456789012.34", "b", "x2", None),
     3: (4, "30.25", None, None, "y3")},
    {1: (6_000_000_000, "11.0000", None, "x1", None),
     2: (2, "123456789012.3400", "b", "x2", None), 3: (4, "30.2575", None, None, "y3")},
]  # fmt: skip
SNAPSHOT_TYPES = {"id": "int", "qty": "int", "price": "decimal(10,2)", "note": "string",
                  "old_name": "string"}  # fmt: skip
BRONZE_TYPES = [
    SNAPSHOT_TYPES,
    {**SNAPSHOT_TYPES, "qty": "bigint"},
    {**SNAPSHOT_TYPES, "qty": "bigint", "price": "decimal(14,2)"},
    {**SNAPSHOT_TYPES, "qty": "bigint", "price": "decimal(14,2)"},
    {**SNAPSHOT_TYPES, "qty": "bigint", "price": "decimal(14,2)", "new_name": "string"},
    {**SNAPSHOT_TYPES, "qty": "bigint", "price": "decimal(16,4)", "new_name": "string"},
]


def write_file(landing: Path, offset: int, fields: list[dict], changes: list[Change]) -> None:
    """One S3-sink file of the topic (partition 0, its start offset)."""
    folder = landing / "topics" / TOPIC
    folder.mkdir(parents=True, exist_ok=True)
    lines = [dumps(envelope(fields, after(c), c.lsn, c.op)) for c in changes]
    (folder / f"{TOPIC}+0+{offset:010d}.json").write_text("\n".join(lines) + "\n")


def read(spark, conf: Settings, database: str, name: str):
    return spark.read.format("hudi").load(to_hadoop_uri(table_path(conf, database, name)))


def source_types(frame) -> dict[str, str]:
    return {
        f.name: f.dataType.simpleString()
        for f in frame.schema.fields
        if not f.name.startswith(("_hoodie", "_cdc_"))
    }


def values(record: dict, columns: list[str]) -> tuple:
    return tuple(
        format(record[c], "f") if isinstance(record[c], Decimal) else record[c] for c in columns
    )


@dataclass
class Followed:
    """After each run: bronze's rows and types, the changelog's types and rows, the results."""

    bronze: list[dict]
    bronze_types: list[dict]
    changelog_types: list[dict]
    changelog: list[list[tuple]]
    quarantined: list[int]
    committed: list[bool]


def table_config(name: str, database: str, table_type: str, buckets: int | None) -> TableConfig:
    return TableConfig(
        name=name,
        source=Source("shop", "postgresql"),
        topic=TOPIC,
        key=("id",),
        database=database,
        table_type=table_type,
        buckets=buckets,
    )


# Copy-on-write with four buckets: keys 1, 2 and 3 fall in three file groups,
# so a commit rewrites only its keys' files and the others stay as written
# under the older types. Merge-on-read: updates go to log files written under
# the newer types over base files of the older ones.
@pytest.fixture(scope="module", params=(("cow", 4), ("mor", None)), ids=("cow", "mor"))
def followed(request, spark, tmp_path_factory) -> Followed:
    """The snapshot, then each of the four schema changes, each ingested on its own run."""
    table_type, buckets = request.param
    root = tmp_path_factory.mktemp(f"schema-{table_type}")
    conf = settings_for(root / "landing", root / "lake")
    database = f"schema_changes_{table_type}"
    table = table_config("t", database, table_type, buckets)
    out = Followed([], [], [], [], [], [])
    offset = 0
    for fields, changes in RUNS:
        write_file(Path(conf.landing), offset, fields, changes)
        offset += len(changes)
        result = ingest(spark, conf, [table], log=lambda _: None).tables[0]
        out.quarantined.append(result.quarantined)
        out.committed.append(result.committed)
        bronze = read(spark, conf, database, "t")
        types = source_types(bronze)
        out.bronze_types.append(types)
        columns = [c for c in types if c != "id"]
        out.bronze.append({r["id"]: values(r.asDict(), columns) for r in bronze.collect()})
        changelog = read(spark, conf, database, "t_changelog")
        out.changelog_types.append(source_types(changelog))
        out.changelog.append(sorted((r["id"], r["qty"], r["price"]) for r in changelog.collect()))
    return out


def test_every_run_commits_and_quarantines_nothing(followed) -> None:
    assert followed.committed == [True] * len(RUNS)
    assert followed.quarantined == [0] * len(RUNS)


def test_bronze_takes_each_widened_type_in_the_run_it_arrives(followed) -> None:
    assert followed.bronze_types == BRONZE_TYPES


def test_bronze_holds_every_row_exactly_after_each_run(followed) -> None:
    """Old rows, written under int and decimal(10,2), read back right under the wider types."""
    assert followed.bronze == BRONZE


def test_the_changelog_takes_the_same_types(followed) -> None:
    assert followed.changelog_types == BRONZE_TYPES


def test_the_changelog_holds_every_event_with_its_values(followed) -> None:
    events = [c for _, changes in RUNS for c in changes]
    want = sorted((c.id, c.values["qty"], c.values["price"]) for c in events)
    assert followed.changelog[-1] == want


def test_old_and_new_rows_read_back_after_each_run(followed) -> None:
    """Each run's bronze holds every key with its values, none lost to a type change."""
    assert [sorted(rows) for rows in followed.bronze] == [[1, 2]] + [[1, 2, 3]] * 5  # fmt: skip


# A source column `code integer` becoming `text`: bronze's int column cannot
# hold text, so only the events written under text are quarantined.
CODE_INT, CODE_TEXT = [ID, field("code", "int32")], [ID, field("code", "string")]


@dataclass
class Refused:
    rows: dict[int, int | None]
    types: dict[str, str]
    quarantine: list[tuple]
    quarantined: list[int]


@pytest.fixture(scope="module")
def refused(spark, tmp_path_factory) -> Refused:
    """A snapshot under `code integer`, then a file with an event under each of int and text."""
    root = tmp_path_factory.mktemp("schema-refused")
    conf = settings_for(root / "landing", root / "lake")
    database = "schema_changes_refused"
    table = table_config("t", database, "cow", None)
    landing = Path(conf.landing)
    quarantined = []
    write_file(landing, 0, CODE_INT, [Change(1, "r", 100, {"code": 1})])
    quarantined.append(ingest(spark, conf, [table], log=lambda _: None).tables[0].quarantined)
    folder = landing / "topics" / TOPIC
    lines = [
        dumps(envelope(CODE_TEXT, {"id": 2, "code": "B-2"}, 200, "c")),
        dumps(envelope(CODE_INT, {"id": 1, "code": 7}, 210, "u")),
        dumps(envelope(CODE_TEXT, {"id": 1, "code": "A-1"}, 220, "u")),
    ]
    (folder / f"{TOPIC}+0+{1:010d}.json").write_text("\n".join(lines) + "\n")
    quarantined.append(ingest(spark, conf, [table], log=lambda _: None).tables[0].quarantined)
    bronze = read(spark, conf, database, "t")
    rows = {r["id"]: r["code"] for r in bronze.collect()}
    query = f"select line, table_name, reason from {database}.{QUARANTINE} order by line"
    quarantine = [tuple(r) for r in spark.sql(query).collect()]
    return Refused(rows, source_types(bronze), quarantine, quarantined)


def test_an_incompatible_change_quarantines_only_its_events(refused) -> None:
    assert refused.quarantined == [0, 2]
    assert refused.rows == {1: 7}  # the event still under `integer` applied
    assert refused.types == {"id": "int", "code": "int"}


def test_the_reason_names_the_column_both_types_and_the_fix(refused) -> None:
    reason = (
        "incompatible schema change: code: type string cannot be stored in a int column; "
        "bronze cannot follow this change: rebuild the table from a fresh snapshot "
        "with `lakehouse resnapshot <table>`"
    )
    assert refused.quarantine == [(0, "t", reason), (2, "t", reason)]


def deleted(fields: list[dict], before: dict, lsn: int) -> dict:
    event = envelope(fields, None, lsn, "d")
    event["payload"]["before"] = before
    return event


@dataclass
class Rebuilt:
    """After `lakehouse resnapshot` and a later run: bronze, the changelog, what was kept."""

    quarantined: list[int]
    refused: str
    rows: dict[int, tuple]
    types: dict[str, str]
    changelog: list[tuple]
    kept: dict[int, int]
    kept_types: dict[str, str]
    quarantine: list[tuple]
    journal_left: bool


def rebuild(spark, conf: Settings, table: TableConfig, snapshot: Path) -> tuple[list[int], str]:
    """The narrowing's run, then the rebuild: interrupted once after moving the tables
    aside (its first two steps), a run refused, then the command run again to the end."""
    quarantined = [ingest(spark, conf, [table], log=lambda _: None).tables[0].quarantined]
    resnapshot._journal(spark, conf, table, str(snapshot))
    replaced = resnapshot_journal.replaced(conf, table)
    resnapshot._move(spark, table_path(conf, table.database, "t"), replaced.kept["bronze"])
    with pytest.raises(UserError) as refused:
        ingest(spark, conf, [table], log=lambda _: None)
    done = resnapshot.resnapshot(spark, conf, table, str(snapshot), log=lambda _: None)
    return [*quarantined, done.applied.quarantined], str(refused.value)


@pytest.fixture(scope="module", params=(("cow", 4), ("mor", None)), ids=("cow", "mor"))
def rebuilt(request, spark, tmp_path_factory) -> Rebuilt:
    """`code integer` snapshotted, then `code text` at the source (with a delete); the
    rebuild from a fresh snapshot's files; then later changes, one a delete."""
    table_type, buckets = request.param
    root = tmp_path_factory.mktemp(f"resnapshot-{table_type}")
    conf = settings_for(root / "landing", root / "lake")
    database = f"resnapshot_{table_type}"
    table = table_config("t", database, table_type, buckets)
    landing, folder = Path(conf.landing), Path(conf.landing) / "topics" / TOPIC
    write_file(landing, 0, CODE_INT, [Change(1, "r", 100, {"code": 1}),
                                      Change(4, "r", 100, {"code": 4})])  # fmt: skip
    first = ingest(spark, conf, [table], log=lambda _: None).tables[0].quarantined
    narrowing = [envelope(CODE_TEXT, {"id": 2, "code": "B-2"}, 200, "c"),
                 envelope(CODE_INT, {"id": 1, "code": 7}, 210, "u"),
                 envelope(CODE_TEXT, {"id": 1, "code": "A-1"}, 220, "u"),
                 deleted(CODE_TEXT, {"id": 4, "code": "4"}, 225)]  # fmt: skip
    (folder / f"{TOPIC}+0+{2:010d}.json").write_text("".join(dumps(e) + "\n" for e in narrowing))
    snapshot = root / "snapshot"
    write_file(snapshot, 0, CODE_TEXT, [Change(1, "r", 230, {"code": "A-1"}),
                                        Change(2, "r", 230, {"code": "B-2"})])  # fmt: skip
    quarantined, refused = rebuild(spark, conf, table, snapshot)
    later = [envelope(CODE_TEXT, {"id": 2, "code": "B-3"}, 300, "u"),
             envelope(CODE_TEXT, {"id": 3, "code": "C-3"}, 310, "c"),
             deleted(CODE_TEXT, {"id": 1, "code": "A-1"}, 320)]  # fmt: skip
    (folder / f"{TOPIC}+0+{6:010d}.json").write_text("".join(dumps(e) + "\n" for e in later))
    last = ingest(spark, conf, [table], log=lambda _: None).tables[0].quarantined
    bronze, changelog = read(spark, conf, database, "t"), read(spark, conf, database, "t_changelog")
    kept = spark.read.format("hudi").load(to_hadoop_uri(kept_bronze(conf, database)))
    query = f"select line, table_name from {database}.{QUARANTINE} order by line"
    return Rebuilt(
        [first, *quarantined, last],
        refused,
        {r["id"]: (r["code"], r["_cdc_is_deleted"]) for r in bronze.collect()},
        source_types(bronze),
        sorted((r["id"], r["code"], r["_cdc_op"]) for r in changelog.collect()),
        {r["id"]: r["code"] for r in kept.collect()},
        source_types(kept),
        [tuple(r) for r in spark.sql(query).collect()],
        resnapshot_journal.journal_path(conf, table).exists(),
    )


def kept_bronze(conf: Settings, database: str) -> str:
    """The one replaced bronze table the rebuild kept beside the new one."""
    (kept,) = Path(table_path(conf, database, "")).glob("t__replaced_*")
    return str(kept)


def test_a_narrowing_quarantines_its_events_until_the_rebuild(rebuilt) -> None:
    """The narrowing's three events under `text` wait in the quarantine; the snapshot and
    the later run quarantine nothing; nothing quarantined is dropped by the rebuild."""
    assert rebuilt.quarantined == [0, 3, 0, 0]
    assert rebuilt.quarantine == [(0, "t"), (2, "t"), (3, "t")]


def test_a_rebuild_interrupted_after_the_move_is_refused_with_the_command(rebuilt) -> None:
    assert "lakehouse resnapshot t --from" in rebuilt.refused
    assert not rebuilt.journal_left


def test_the_rebuilt_table_equals_the_source_after_later_changes(rebuilt) -> None:
    """Key 4, deleted at the source under `text`, is gone; 1 took its text value from the
    snapshot, then its delete; 2 and 3 changed after it."""
    assert rebuilt.rows == {1: ("A-1", True), 2: ("B-3", False), 3: ("C-3", False)}
    assert rebuilt.types == {"id": "int", "code": "string"}


def test_the_rebuilt_changelog_starts_at_the_snapshot(rebuilt) -> None:
    assert rebuilt.changelog == [
        (1, "A-1", "d"), (1, "A-1", "r"), (2, "B-2", "r"), (2, "B-3", "u"), (3, "C-3", "c")
    ]  # fmt: skip


def test_the_replaced_table_is_kept_as_it_was(rebuilt) -> None:
    assert rebuilt.kept == {1: 7, 4: 4}
    assert rebuilt.kept_types == {"id": "int", "code": "int"}


def decimal(precision: int, scale: int) -> FieldType:
    return FieldType("decimal", precision, scale, "bytes")


INT32, INT64 = FieldType("int32"), FieldType("int64")
WIDENINGS = [
    (FieldType("int8"), FieldType("int16"), FieldType("int16")),
    (FieldType("int16"), INT32, INT32),
    (INT32, INT64, INT64),
    (INT64, INT32, INT64),  # a narrower version keeps the wider type
    (FieldType("float32"), FieldType("float64"), FieldType("float64")),
    (decimal(10, 2), decimal(14, 2), decimal(14, 2)),
    (decimal(10, 2), decimal(14, 4), decimal(14, 4)),
    (decimal(14, 4), decimal(10, 2), decimal(14, 4)),
    (decimal(10, 2), decimal(10, 4), decimal(12, 4)),  # holds both
    (decimal(30, 2), decimal(30, 12), None),  # 40 digits: no Spark decimal
    (FieldType("string"), INT32, None),
    (FieldType("timestamp_us"), FieldType("date"), None),
]


@pytest.mark.parametrize(("current", "incoming", "wider"), WIDENINGS)
def test_widen(current: FieldType, incoming: FieldType, wider: FieldType | None) -> None:
    assert widen(current, incoming) == wider


def test_a_column_bronze_holds_takes_the_wider_type_of_a_later_version() -> None:
    bronze = {"id": INT32, "qty": INT32, "price": decimal(10, 2), "code": INT32}
    versions = [
        {"id": INT32, "qty": INT64, "price": decimal(14, 2), "code": FieldType("string")},
        {"id": INT32, "qty": INT32, "price": decimal(10, 2), "code": INT32},
    ]
    assert resolve_columns(bronze, versions) == {
        "id": INT32, "qty": INT64, "price": decimal(14, 2), "code": INT32,
    }  # fmt: skip
    # Past 38 digits a stored decimal column is not turned into text.
    assert resolve_columns(
        {"p": decimal(38, 2)}, [{"p": FieldType("decimal_text", 40, 2, "bytes")}]
    ) == {"p": decimal(38, 2)}


@pytest.mark.parametrize(
    ("incoming", "table", "fits"),
    [
        (INT32, INT64, True),
        (decimal(10, 2), decimal(14, 4), True),
        (FieldType("string"), INT32, False),
        (decimal(14, 4), decimal(14, 2), False),
        (FieldType("date"), FieldType("timestamp_us"), False),
        (FieldType("timestamp_us"), FieldType("date"), False),
    ],
)
def test_incompatibility(incoming: FieldType, table: FieldType, fits: bool) -> None:
    assert (incompatibility(incoming, table) is None) == fits


def test_dbt_sources_take_bronze_type_when_the_source_widened_it() -> None:
    text = dbt_sources.SOURCES_FILE.read_text()
    tables = load_tables()
    held = {"qtysold": "bigint", "pricepaid": "decimal(12,2)", "commission": "decimal(4,2)"}
    rendered = dbt_sources.render(text, tables, {"sales": held})
    (source,) = yaml.safe_load(rendered)["sources"]
    sales = next(t for t in source["tables"] if t["name"] == "sales")
    types = {c["name"]: c.get("data_type") for c in sales["columns"]}
    # Wider in bronze: bronze's; narrower in bronze than declared: the config's.
    assert (types["qtysold"], types["pricepaid"], types["commission"]) == (
        "bigint", "decimal(12,2)", "decimal(8,2)",
    )  # fmt: skip
