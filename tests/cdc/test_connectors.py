"""Failed connector tasks are restarted, a few times, then reported with their trace;
`cdc up` waits until each connector has published a marker.

Connect never restarts a failed task by itself, and Debezium's MariaDB 3.2 task
can die after a broker restart (connectors.Restarter); the live chain's
test cannot make that race happen on demand. These tests run the project's
REST client against a loopback stand-in for Connect's status and restart
endpoints, whose task fails the way that one does.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
import yaml

from ingestion.config import TABLES_FILE, load_document, load_tables
from ingestion.decode.types import FieldType
from ingestion.settings import Settings, settings
from lakehouse.cdc import connectors, markers
from lakehouse.stack import StackError

TRACE = (
    "java.lang.IllegalStateException: DebeziumOpenLineageEmitter not initialized for "
    "connector ConnectorContext[connectorName=mariadb, config={database.password=secret}]"
)
SHOWN = TRACE.replace("{database.password=secret}]", "{...}")  # the config left out
RESTART = "/connectors/tickit-ecomm/restart?includeTasks=true&onlyFailed=true"


class _Connect(http.server.BaseHTTPRequestHandler):
    """Connect's status and restart endpoints; tickit-ecomm's task fails `failures` times."""

    failures = 0
    restarts: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        name = self.path.split("/")[2]
        task = {"id": 0, "state": "RUNNING"}
        if name == "tickit-ecomm" and len(self.restarts) < self.failures:
            task = {"id": 0, "state": "FAILED", "trace": f"{TRACE}\n\tat ..."}
        self._answer(200, {"name": name, "connector": {"state": "RUNNING"}, "tasks": [task]})

    def do_POST(self) -> None:
        self.restarts.append(self.path)
        self._answer(202, {})

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def connect(monkeypatch) -> Iterator[Settings]:
    """The stand-in on a loopback port, as the settings name it; no grace after a restart."""
    _Connect.restarts, _Connect.failures = [], 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Connect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(connectors, "RESTART_GRACE", 0.0)
    yield dataclasses.replace(settings(), cdc_connect_port=server.server_port)
    server.shutdown()
    server.server_close()


def test_a_failed_task_is_restarted_and_the_wait_ends_when_it_runs(connect: Settings) -> None:
    _Connect.failures = 1
    logged: list[str] = []
    connectors.wait_running(connect, time.monotonic() + 30, logged.append)
    assert _Connect.restarts == [RESTART]
    assert logged == [f"connector tickit-ecomm: task failed ({SHOWN}); restarting it"]


def test_a_task_that_keeps_failing_ends_the_wait_with_its_trace(connect: Settings) -> None:
    _Connect.failures = 99
    with pytest.raises(StackError) as raised:
        connectors.wait_running(connect, time.monotonic() + 30, lambda _: None)
    assert len(_Connect.restarts) == connectors.MAX_RESTARTS
    assert str(raised.value) == (
        f"connector tickit-ecomm failed again after {connectors.MAX_RESTARTS} restarts: "
        f"{SHOWN}; see `lakehouse cdc logs --service connect`"
    )


def _marker_topics(monkeypatch, published_from: int) -> list[int]:
    """Markers written (their count); each topic holds one once `published_from` are written.

    The first markers stand for ones written inside a snapshot's window: lost.
    """
    written: list[int] = []
    monkeypatch.setattr(markers, "REMARK_SECONDS", 0.0)
    monkeypatch.setattr(markers, "write_markers", lambda conf: written.append(1) or {})
    monkeypatch.setattr(
        markers,
        "_records",
        lambda reader: {t: int(len(written) >= published_from) for t in markers.TOPICS.values()},
    )
    return written


def test_a_lost_marker_is_written_again_until_each_connector_publishes_one(
    connect: Settings, monkeypatch
) -> None:
    written = _marker_topics(monkeypatch, published_from=2)
    markers.wait_capturing(connect, time.monotonic() + 30, lambda _: None)
    assert len(written) == 2


def test_no_marker_published_in_time_is_one_line(connect: Settings, monkeypatch) -> None:
    _marker_topics(monkeypatch, published_from=10_000)
    with pytest.raises(StackError, match=r"^the connectors published no marker in time; see"):
        markers.wait_capturing(connect, time.monotonic() + 1, lambda _: None)


# The connector settings that keep values exact (docs/contracts.md, "Connector
# settings for exact values"); Debezium's defaults for the first two lose data.
EXACT_MARIADB = {
    "decimal.handling.mode": "precise",
    "bigint.unsigned.handling.mode": "precise",
    "time.precision.mode": "adaptive_time_microseconds",
    "binary.handling.mode": "bytes",
    "enable.time.adjuster": "false",
    "event.converting.failure.handling.mode": "fail",
}
EXACT_POSTGRES = {
    "decimal.handling.mode": "precise",
    "time.precision.mode": "adaptive",
    "interval.handling.mode": "string",
    "hstore.handling.mode": "json",
    "binary.handling.mode": "bytes",
    "money.fraction.digits": "2",
}


def test_the_connectors_choose_exact_values() -> None:
    configs = connectors.connector_configs(settings())
    assert {k: configs["tickit-ecomm"].get(k) for k in EXACT_MARIADB} == EXACT_MARIADB
    assert {k: configs["tickit-ems"].get(k) for k in EXACT_POSTGRES} == EXACT_POSTGRES
    assert not [v for c in configs.values() for v in c.values() if "${" in v]


def test_an_avro_source_s_connector_writes_avro_through_the_registry() -> None:
    """The suite's chain: ems on Avro (tests/conftest.py); ecomm on the worker's JSON unless
    LAKEHOUSE_SOURCE_KAFKA_FORMATS says otherwise."""
    conf = settings()
    assert conf.source_kafka_formats.get("ems") == "avro"
    configs = connectors.connector_configs(conf)
    api = f"http://127.0.0.1:{conf.cdc_registry_port}/apis/registry/v2"
    ecomm_avro = conf.source_kafka_formats.get("ecomm") == "avro"
    for part in ("key", "value"):
        assert configs["tickit-ems"][f"{part}.converter"] == connectors.AVRO_CONVERTER
        assert configs["tickit-ems"][f"{part}.converter.apicurio.registry.url"] == api
        assert (f"{part}.converter" in configs["tickit-ecomm"]) == ecomm_avro


def test_only_the_table_configs_booleans_become_booleans() -> None:
    """TINYINT(1) is a boolean only where conf/tables.yml says so: ecomm.date.holiday."""
    ecomm = connectors.connector_configs(settings())["tickit-ecomm"]
    selector = ecomm["boolean.selector"]
    assert ecomm["converters"] == "boolean"
    assert selector == r"ecomm\.date\.holiday"
    # Debezium matches each regex against the whole `db.table.column`, ignoring case.
    matches = lambda column: any(  # noqa: E731
        re.fullmatch(p, column, re.IGNORECASE) for p in selector.split(",")
    )
    assert matches("ecomm.date.holiday")
    assert not matches("ecomm.dateXholiday") and not matches("ecomm.listing.numtickets")


def test_the_boolean_selector_follows_the_table_config() -> None:
    tables = load_tables()
    config = {"topic.prefix": "tickit", "database.include.list": "ecomm,other"}
    flagged = dataclasses.replace(
        tables["listing"], columns={**tables["listing"].columns, "is_sold": FieldType("boolean")}
    )
    other = dataclasses.replace(tables["date"], topic="tickit.other.day_2")
    found = connectors.boolean_selector(config, [tables["date"], flagged, other, tables["users"]])
    assert found == r"ecomm\.date\.holiday,ecomm\.listing\.is_sold,other\.day_2\.holiday"
    # crm's users have booleans, but another connector (and database) writes them.
    assert connectors.boolean_selector(config, [tables["users"]]) == connectors.NO_COLUMN
    # Without database.include.list the connector captures every database.
    every_database = connectors.boolean_selector({"topic.prefix": "tickit"}, [tables["users"]])
    assert every_database.split(",")[:2] == [r"crm\.user\.likesports", r"crm\.user\.liketheatre"]
    assert len(every_database.split(",")) == 10
    assert re.fullmatch(connectors.NO_COLUMN, "ecomm.date.holiday") is None


def captures(listed: str, name: str) -> bool:
    """Whether a `table.include.list` takes `schema.table`, as Debezium matches: each
    comma-separated regex (`\\,` a comma inside one) against the whole name, any case."""
    patterns = re.split(r"(?<!\\),", listed)
    return any(re.fullmatch(p.replace("\\,", ","), name, re.IGNORECASE) for p in patterns)


def test_a_pattern_source_s_connector_captures_what_the_lake_serves(tmp_path) -> None:
    """The source's patterns (its excludes kept out), its listed tables and the chain's own
    markers and signalling table; the project's sources list their tables, and their
    connectors capture whole schemas."""
    document = yaml.safe_load(TABLES_FILE.read_text())
    document["sources"] = {
        "ems": {"connector": "postgresql", "kind": "kafka", "topic_prefix": "tickit",
                "include": [r"ems\.app_.*", r"ems\.t{1,2}x"]},
        "ecomm": {"connector": "mysql", "kind": "kafka", "topic_prefix": "tickit",
                  "include": [r"ecomm\.shop_.*"],
                  "exclude": [r"ecomm\.shop_audit", r"ecomm\.shop_tmp_.*"]},
        "crm": {"connector": "sqlserver"},
    }  # fmt: skip
    (tmp_path / "tables.yml").write_text(yaml.safe_dump(document))
    patterned = load_document(tmp_path / "tables.yml")
    configs = connectors.connector_configs(settings())
    assert not [c for c in configs.values() if "table.include.list" in c]
    ems = connectors.table_include_list(patterned.sources["ems"], configs["tickit-ems"], patterned)
    for name in ("ems.app_orders", "ems.TTX", "ems.event", "ems.lakehouse_marker",
                 "ems.debezium_signal"):  # fmt: skip
        assert captures(ems, name), name
    assert not captures(ems, "ems.other") and not captures(ems, "ems.tttx")
    ecomm = connectors.table_include_list(
        patterned.sources["ecomm"], configs["tickit-ecomm"], patterned
    )
    assert captures(ecomm, "ecomm.shop_a") and captures(ecomm, "ecomm.SHOP_B")
    assert captures(ecomm, "ecomm.date") and captures(ecomm, "ecomm.debezium_signal")
    assert not captures(ecomm, "ecomm.shop_audit") and not captures(ecomm, "ecomm.shop_tmp_1")
    assert not captures(ecomm, "ems.app_orders")
