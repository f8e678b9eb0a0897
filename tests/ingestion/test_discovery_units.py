"""A whole database by pattern, without a broker: matching, naming, keys, what is left out."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ingestion.config import ConfigError, load_document
from ingestion.continuous import TableWatch
from ingestion.discovery import (
    LANDING_KEY_FIX,
    NO_KEY_FIX,
    discover,
    key_columns,
    landing_topics,
    matching,
)

SHOP = """
defaults: {table_type: mor}
sources:
  shop:
    connector: postgresql
    kind: kafka
    topic_prefix: app
    include: ['public\\..*', 'billing\\.invoice']
    exclude: ['public\\.tmp_.*']
  files: {connector: mysql, topic_prefix: lake, include: ['db\\..*']}
tables:
  orders: {source: shop, topic: app.public.orders, key: [order_id], table_type: cow}
"""


def _document(tmp_path: Path, text: str = SHOP):
    path = tmp_path / "tables.yml"
    path.write_text(text)
    return load_document(path, database="bronze")


def test_patterns_take_whole_schema_table_names(tmp_path: Path) -> None:
    shop = _document(tmp_path).sources["shop"]
    assert matching(shop, "app.public.customers") == "public.customers"
    assert matching(shop, "app.billing.invoice") == "billing.invoice"
    assert matching(shop, "app.billing.invoice_line") is None  # a pattern matches in full
    assert matching(shop, "app.public.tmp_load") is None  # excluded
    assert matching(shop, "other.public.customers") is None  # another connector's prefix
    assert matching(shop, "app.public") is None  # Debezium's schema-change topic, no table
    assert matching(shop, "app.public.a.b") is None


def test_found_tables_take_the_defaults_and_listed_ones_win(tmp_path: Path) -> None:
    document = _document(tmp_path)
    topics = {
        "shop": ["app.public.orders", "app.public.customers", "app.public.audit_log",
                 "app.public.2fa", "app.public.empty", "app.billing.invoice",
                 "app.public.tmp_load", "app.billing.refund"],
        "files": ["lake.db.t1"],
    }  # fmt: skip
    keys = {
        "app.public.customers": ["customer_id"],
        "app.public.2fa": ["id"],
        "app.public.audit_log": None,  # no primary key: null record keys
        "app.public.empty": [],  # no record yet
        "app.billing.invoice": ["invoice_no", "year"],
    }
    served = discover(
        document,
        lambda source: topics[source.name],
        lambda source, topic: keys.get(topic) if source.kind == "kafka" else None,
    )
    assert sorted(served.found) == ["_2fa", "customers", "invoice"]
    assert served.tables["orders"].table_type == "cow"  # listed: its own settings
    customers = served.tables["customers"]
    assert (customers.topic, customers.key, customers.table_type) == (
        "app.public.customers", ("customer_id",), "mor"
    )  # fmt: skip
    assert customers.database == "bronze" and customers.source.name == "shop"
    assert served.tables["invoice"].key == ("invoice_no", "year")
    left_out = {u.topic: u.reason for u in served.unserved}
    assert left_out == {"app.public.audit_log": NO_KEY_FIX, "lake.db.t1": LANDING_KEY_FIX}
    assert served.unread == ["app.billing.refund", "app.public.tmp_load"]  # excluded, unmatched


def test_a_found_name_taken_by_another_table_is_left_out_with_the_fix(tmp_path: Path) -> None:
    text = SHOP.replace("'billing\\.invoice'", "'archive\\..*'")
    served = discover(
        _document(tmp_path, text),
        lambda source: ["app.archive.orders"] if source.name == "shop" else [],
        lambda source, topic: ["id"],
    )
    assert "app.archive.orders" not in {t.topic for t in served.tables.values()}
    [unserved] = served.unserved
    assert "orders is taken by app.public.orders" in unserved.reason
    assert "conf/tables.yml" in unserved.reason


def test_no_patterns_no_looking(tmp_path: Path) -> None:
    text = "sources: {ems: {connector: postgresql}}\ntables: {}\n"

    def fail(*_: object) -> list[str]:
        raise AssertionError("a source without patterns was looked at")

    served = discover(_document(tmp_path, text), fail, fail)
    assert served.tables == {} and served.found == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{connector: postgresql, include: ['public\\..*']}", "field 'topic_prefix': is required"),
        ("{connector: postgresql, topic_prefix: a, include: ['(']}", "field 'include': not a"),
        ("{connector: postgresql, topic_prefix: a, include: [1]}", "field 'include': must be"),
        ("{connector: postgresql, topic_prefix: 'a b', include: [x]}", "'a b' is not a valid"),
        ("{connector: postgresql, database_url_env: 'postgresql://x'}", "field 'database_url_env'"),
    ],
)
def test_invalid_patterns_name_the_field(tmp_path: Path, source: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _document(tmp_path, f"sources:\n  s: {source}\ntables: {{}}\n")


def test_debezium_key_schemas_give_the_key_columns() -> None:
    key = {
        "schema": {"type": "struct", "fields": [
            {"type": "int32", "optional": False, "field": "invoice_no"},
            {"type": "int16", "optional": False, "field": "year"},
        ], "optional": False, "name": "app.billing.invoice.Key"},
        "payload": {"invoice_no": 7, "year": 2026},
    }  # fmt: skip
    assert key_columns(json.dumps(key).encode()) == ["invoice_no", "year"]
    assert key_columns(b"") == []  # no record yet
    assert key_columns(None) is None
    assert key_columns(b"not json") is None
    assert key_columns(b'{"schema": null, "payload": 7}') is None  # schemas disabled


def test_landing_topics_are_its_topic_folders(tmp_path: Path) -> None:
    for name in ("lake.db.a", "lake.db.b", "other.db.c"):
        (tmp_path / "topics" / name).mkdir(parents=True)
    (tmp_path / "topics" / "lake.db.file").write_text("")
    assert landing_topics(str(tmp_path), "lake.") == ["lake.db.a", "lake.db.b"]
    assert landing_topics(str(tmp_path / "absent"), "lake.") == []


def test_the_watch_looks_again_on_a_change_or_after_its_interval(tmp_path: Path) -> None:
    path = tmp_path / "tables.yml"
    path.write_text("x")
    looks: list[float] = []

    def load() -> list:
        looks.append(time.monotonic())
        return []

    watch = TableWatch(path, load, lambda _: None, every_seconds=0.2)
    assert watch.added(set()) == [] and looks == []  # neither changed nor due
    deadline = time.monotonic() + 5
    while not looks and time.monotonic() < deadline:
        watch.added(set())
    assert len(looks) == 1  # the interval passed
    path.write_text("changed")
    watch.added(set())
    assert len(looks) == 2
