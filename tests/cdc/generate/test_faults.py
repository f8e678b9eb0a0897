"""Acceptance 3: the faults are really in the stream, and the final state still holds."""

from __future__ import annotations

import pytest

from lakehouse.cdc.generate.tickit import TABLES, columns_of

from .landing_reader import decode, payload_of, replay

CHANGE_TOPICS = [table.topic for table in TABLES.values()]


def ops(landing, topic):
    return [(r, payload_of(r, landing.format)) for r in landing.records[topic]]


@pytest.mark.parametrize("topic", CHANGE_TOPICS)
def test_redelivered_duplicates_repeat_an_event_at_a_later_offset(landing_json, topic):
    seen: dict[bytes, int] = {}
    repeats = []
    for record in landing_json.records[topic]:
        if record.tombstone:
            continue
        if record.raw in seen:
            assert record.offset > seen[record.raw]
            repeats.append(record)
        else:
            seen[record.raw] = record.offset
    assert len(repeats) >= 3, "at least one redelivery per change batch"
    entry = landing_json.manifest["topics"][topic]
    tombstones = sum(1 for r in repeats if r.value["payload"]["op"] == "d")
    assert entry["duplicates"] == len(repeats) + tombstones


@pytest.mark.parametrize("topic", CHANGE_TOPICS)
def test_a_newer_change_sits_in_an_earlier_file_than_an_older_one(landing_json, topic):
    changes = [c for c in decode(landing_json, topic) if c.key is not None]
    latest_by_key: dict[int, object] = {}
    out_of_order = []
    for change in changes:  # in offset order
        earlier = latest_by_key.get(change.key)
        if earlier is not None and earlier.position > change.position:
            assert earlier.record.path != change.record.path
            assert earlier.record.offset < change.record.offset
            out_of_order.append((earlier, change))
        if earlier is None or change.position > earlier.position:
            latest_by_key[change.key] = change
    assert out_of_order, "late events must arrive after newer changes of their key"
    assert landing_json.manifest["topics"][topic]["late_events"] == len(out_of_order)
    for newer, older in out_of_order:
        assert older.record.day > newer.record.day
        assert older.op == "u"


def test_users_gain_loyaltytier_from_change_batch_two(landing_json):
    topic = "tickit.crm.user"
    entry = landing_json.manifest["topics"][topic]
    assert entry["schema_change"] == {
        "batch": 2,
        "column": "loyaltytier",
        "type": "varchar(10)",
        "nullable": True,
    }
    batch_of = {path: int(b) for b, paths in entry["files"].items() for path in paths}
    with_tier = 0
    for record in landing_json.records[topic]:
        if record.tombstone:
            continue
        after_schema = record.value["schema"]["fields"][1]
        names = [f["field"] for f in after_schema["fields"]]
        committed_day = record.value["payload"]["source"]["ts_ms"] // 86_400_000
        landed_day = record.day.toordinal() - 719_163
        batch = batch_of[record.path]
        committed_batch = batch - (landed_day - committed_day)
        has_column = "loyaltytier" in names
        assert has_column == (committed_batch >= 2), (record.path, record.offset)
        if has_column:
            assert names[-1] == "loyaltytier"
            assert after_schema["fields"][-1] == {
                "type": "string",
                "optional": True,
                "field": "loyaltytier",
            }
            image = record.value["payload"]["after"] or record.value["payload"]["before"]
            with_tier += image["loyaltytier"] is not None
    assert with_tier > 0
    expected = landing_json.expected("users")
    assert all("loyaltytier" in row for row in expected)
    assert any(row["loyaltytier"] for row in expected)
    assert any(row["loyaltytier"] is None for row in expected)


def test_no_schema_change_before_batch_two(generated):
    _, landing = generated(format="json", change_batches=1)
    assert landing.manifest["topics"]["tickit.crm.user"]["schema_change"] is None
    assert all("loyaltytier" not in row for row in landing.expected("users"))


def test_avro_rotates_files_when_the_users_schema_changes(generated):
    _, landing = generated(format="avro")
    schemas_by_file: dict[str, set[int]] = {}
    for record in landing.records["tickit.crm.user"]:
        value = record.schema[1]["fields"][0]["type"][1]
        columns = len(value["fields"])
        schemas_by_file.setdefault(record.path, set()).add(columns)
    assert {18, 19} == set().union(*schemas_by_file.values())
    assert all(len(widths) == 1 for widths in schemas_by_file.values())


def test_every_delete_is_followed_by_a_tombstone(any_format):
    _, landing = any_format
    deletes = 0
    for topic in CHANGE_TOPICS:
        records = ops(landing, topic)
        for i, (record, payload) in enumerate(records):
            if record.tombstone:
                previous, previous_payload = records[i - 1]
                assert previous.partition == record.partition
                assert _op(previous_payload, landing.format) == "d"
                continue
            if _op(payload, landing.format) == "d":
                deletes += 1
                follower = records[i + 1][0]
                assert follower.tombstone and follower.offset == record.offset + 1
    assert deletes >= 10


def _op(payload, fmt: str) -> str:
    return payload["__op"] if fmt == "unwrapped" else payload["op"]


def test_unwrapped_rewrites_deletes_with_the_before_image(generated):
    _, landing = generated(format="unwrapped")
    deletes = [
        p for r, p in ops(landing, "tickit.ecomm.sale") if p is not None and p["__op"] == "d"
    ]
    assert deletes
    for payload in deletes:
        assert payload["__deleted"] == "true"
        assert payload["salesid"] is not None and payload["pricepaid"] is not None
    others = [p for r, p in ops(landing, "tickit.ecomm.sale") if p is not None and p["__op"] != "d"]
    assert {p["__deleted"] for p in others} == {"false"}


def test_truncate_then_reinsert_in_batch_two(landing_json):
    topic = "tickit.ems.category"
    entry = landing_json.manifest["topics"][topic]
    assert entry["truncate"] == {"batch": 2, "delivered": True}
    batch_2 = set(entry["files"]["2"])
    changes = decode(landing_json, topic)
    truncates = [c for c in changes if c.op == "t"]
    assert len({c.position for c in truncates}) == 1
    truncate = truncates[0]
    assert truncate.record.path in batch_2
    payload = truncate.record.value["payload"]
    assert payload["before"] is None and payload["after"] is None
    assert payload["source"]["table"] == "category" and payload["source"]["lsn"] > 0
    live_before = replay(
        [c for c in changes if c.position < truncate.position], _columns("category")
    )
    reinserted = [c for c in changes if c.op == "c" and c.record.path in batch_2]
    live_keys = {row["catid"] for row in live_before if not row["_deleted"]}
    assert live_keys <= {c.key for c in reinserted if c.position > truncate.position}
    assert all(not row["_deleted"] for row in landing_json.expected("category"))


def test_unwrapped_drops_the_truncate_but_keeps_tombstones(generated):
    _, landing = generated(format="unwrapped")
    entry = landing.manifest["topics"]["tickit.ems.category"]
    assert entry["truncate"] == {"batch": 2, "delivered": False}
    assert entry["events"]["t"] == 0
    assert sum(e["tombstones"] for e in landing.manifest["topics"].values()) > 0


@pytest.mark.parametrize(
    ("table", "topic"), [("sales", "tickit.ecomm.sale"), ("venue", "tickit.ems.venue")]
)
def test_truncate_table_is_chosen_by_a_flag(generated, table, topic):
    _, landing = generated(format="json", truncate_table=table)
    truncated = [t for t, e in landing.manifest["topics"].items() if e["events"]["t"]]
    assert truncated == [topic]


def test_truncate_none_disables_it(generated):
    _, landing = generated(format="json", truncate_table=None)
    assert all(e["events"]["t"] == 0 for e in landing.manifest["topics"].values())
    assert all(e["truncate"] is None for e in landing.manifest["topics"].values())


def _columns(table: str) -> list[str]:
    return [c.name for c in columns_of(TABLES[table], 2)]


def test_replaying_by_source_position_gives_the_expected_state(any_format):
    _, landing = any_format
    for table in TABLES.values():
        replayed = replay(decode(landing, table.topic), _columns(table.name))
        if table.name != "users":
            for row in replayed:
                row.pop("loyaltytier", None)
        assert replayed == landing.expected(table.name), table.name


def test_replaying_in_offset_order_would_be_wrong(landing_json):
    """The late events make naive last-offset-wins ingestion fail: the fault has teeth."""
    wrong = 0
    for table in TABLES.values():
        state = {}
        for change in decode(landing_json, table.topic):
            if change.key is not None:
                state[change.key] = change.row
        expected = {row[table.key]: row for row in landing_json.expected(table.name)}
        wrong += sum(
            1
            for key, row in state.items()
            if {k: v for k, v in expected[key].items() if k in row} != row
        )
    assert wrong >= 7


def test_expected_state_keeps_foreign_keys(landing_json):
    expected = {name: landing_json.expected(name) for name in TABLES}
    live = {
        name: {row[TABLES[name].key] for row in rows if not row["_deleted"]}
        for name, rows in expected.items()
    }
    for table in TABLES.values():
        for fk in table.foreign_keys:
            for row in expected[table.name]:
                if not row["_deleted"]:
                    assert row[fk.column] in live[fk.parent], (table.name, fk.column, row)
    deleted = sum(row["_deleted"] for rows in expected.values() for row in rows)
    assert deleted >= 10


def test_manifest_counts_match_the_files(any_format):
    _summary, landing = any_format
    for topic, entry in landing.manifest["topics"].items():
        records = landing.records[topic]
        tombstones = sum(r.tombstone for r in records)
        assert entry["tombstones"] == tombstones
        assert entry["records"] == len(records) == sum(entry["events"].values()) + tombstones
        assert entry["keys"] == len(landing.expected(entry["table"]))
        assert sorted(p for paths in entry["files"].values() for p in paths) == sorted(
            {r.path for r in records}
        )
