"""Each connector's `source` block: Debezium 2.x fields, positions in commit order."""

from __future__ import annotations

import re

import pytest

from .landing_reader import decode, position_of

COMMON = ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence"]
SOURCE_FIELDS = {
    "postgresql": [*COMMON, "schema", "table", "txId", "lsn", "xmin"],
    "mysql": [*COMMON, "table", "server_id", "gtid", "file", "pos", "row", "thread", "query"],
    "sqlserver": [
        *COMMON,
        "schema",
        "table",
        "change_lsn",
        "commit_lsn",
        "event_serial_no",
    ],
}
SYSTEM_TOPICS = {
    "postgresql": ["tickit.ems.category", "tickit.ems.event", "tickit.ems.venue"],
    "mysql": ["tickit.ecomm.date", "tickit.ecomm.listing", "tickit.ecomm.sale"],
    "sqlserver": ["tickit.crm.user"],
}
LSN = re.compile(r"^[0-9a-f]{8}:[0-9a-f]{8}:[0-9a-f]{4}$")


def events(landing, topics):
    out = []
    for topic in topics:
        for record in landing.records[topic]:
            if not record.tombstone:
                out.append(record.value["payload"])
    return out


@pytest.mark.parametrize("connector", SOURCE_FIELDS)
def test_source_blocks_have_the_connectors_fields(landing_json, connector):
    payloads = events(landing_json, SYSTEM_TOPICS[connector])
    for payload in payloads:
        source = payload["source"]
        assert list(source) == SOURCE_FIELDS[connector]
        assert source["connector"] == connector
        assert source["version"] == "2.4.2.Final"
        assert source["name"] == "tickit"
        assert payload["ts_ms"] >= source["ts_ms"]
        assert payload["transaction"] is None


def test_snapshot_markers(landing_json):
    for connector, topics in SYSTEM_TOPICS.items():
        markers = []
        for topic in topics:
            batch_0 = set(landing_json.manifest["topics"][topic]["files"]["0"])
            markers += [
                r.value["payload"]["source"]["snapshot"]
                for r in landing_json.records[topic]
                if r.path in batch_0
            ]
        assert markers[-1] == "last", connector
        assert set(markers[:-1]) == {"true"}, connector
    changes = events(landing_json, ["tickit.ecomm.sale"])
    assert {p["source"]["snapshot"] for p in changes if p["op"] != "r"} == {"false"}


@pytest.mark.parametrize("connector", SOURCE_FIELDS)
def test_positions_increase_in_commit_order(landing_json, connector):
    payloads = [p for p in events(landing_json, SYSTEM_TOPICS[connector]) if p["op"] != "r"]
    ordered = sorted(payloads, key=lambda p: position_of(connector, p["source"]))
    times = [p["source"]["ts_ms"] for p in ordered]
    assert times == sorted(times)
    positions = {position_of(connector, p["source"]) for p in payloads}
    snapshot = [p for p in events(landing_json, SYSTEM_TOPICS[connector]) if p["op"] == "r"]
    assert max(position_of(connector, p["source"]) for p in snapshot) < min(positions)
    assert len(positions) > 10


def test_postgres_positions(landing_json):
    payloads = events(landing_json, SYSTEM_TOPICS["postgresql"])
    for payload in payloads:
        source = payload["source"]
        assert source["schema"] == "ems" and source["db"] == "tickit"
        assert isinstance(source["lsn"], int) and isinstance(source["txId"], int)
        if payload["op"] == "r":
            assert source["sequence"] == f'[null,"{source["lsn"]}"]'
        else:
            last_commit, lsn = re.fullmatch(r'\["(\d+)","(\d+)"\]', source["sequence"]).groups()
            assert int(lsn) == source["lsn"] and int(last_commit) < source["lsn"]


def test_mysql_positions(landing_json):
    payloads = events(landing_json, SYSTEM_TOPICS["mysql"])
    files_by_day: dict[int, set[str]] = {}
    multi_row = 0
    for payload in payloads:
        source = payload["source"]
        assert re.fullmatch(r"mysql-bin-changelog\.\d{6}", source["file"])
        assert source["db"] == "ecomm" and source["pos"] > 0
        if payload["op"] == "r":
            assert source["server_id"] == 0 and source["gtid"] is None
        else:
            assert source["server_id"] > 0
            assert re.fullmatch(r"[0-9a-f-]{36}:\d+", source["gtid"])
            assert source["thread"] > 0
            multi_row += source["row"] > 0
        files_by_day.setdefault(source["ts_ms"] // 86_400_000, set()).add(source["file"])
    assert all(len(files) == 1 for files in files_by_day.values()), "one binlog file per day"
    assert len({f for files in files_by_day.values() for f in files}) == 4
    assert multi_row > 0, "multi-row INSERTs share a position and count rows"


def test_sql_server_positions(landing_json):
    for payload in events(landing_json, SYSTEM_TOPICS["sqlserver"]):
        source = payload["source"]
        assert (source["db"], source["schema"], source["table"]) == ("crm", "dbo", "user")
        assert LSN.match(source["commit_lsn"])
        if payload["op"] == "r":
            assert source["change_lsn"] is None and source["event_serial_no"] is None
        else:
            assert LSN.match(source["change_lsn"])
            assert source["change_lsn"] <= source["commit_lsn"]
            assert source["event_serial_no"] == (2 if payload["op"] == "u" else 1)


ADDED = {
    "tickit.ems.event": ["__op", "__db", "__table", "__schema", "__lsn", "__source_ts_ms"],
    "tickit.ecomm.sale": ["__op", "__db", "__table", "__source_ts_ms", "__file", "__pos", "__row"],
    "tickit.crm.user": [
        "__op",
        "__db",
        "__table",
        "__schema",
        "__source_ts_ms",
        "__change_lsn",
        "__commit_lsn",
        "__event_serial_no",
    ],
}


@pytest.mark.parametrize("topic", ADDED)
def test_unwrapped_adds_the_connectors_fields(generated, topic):
    _, landing = generated(format="unwrapped")
    record = landing.records[topic][0]
    names = [f["field"] for f in record.value["schema"]["fields"]]
    assert names[-len(ADDED[topic]) - 1 :] == [*ADDED[topic], "__deleted"]
    payload = record.value["payload"]
    assert payload["__op"] == "r" and payload["__deleted"] == "false"
    assert record.value["schema"]["name"].endswith(".Value")
    assert decode(landing, topic)[0].position == position_of(
        landing.manifest["topics"][topic]["connector"],
        {k[2:]: v for k, v in payload.items() if k.startswith("__")},
    )


def test_batches_land_on_their_own_days(landing_json):
    for topic, entry in landing_json.manifest["topics"].items():
        for batch, paths in entry["files"].items():
            assert paths, (topic, batch)
            assert all(f"/day={1 + int(batch):02d}/" in p for p in paths)
