"""What a Kafka source plans to read, from offsets alone (no broker, no Spark)."""

from __future__ import annotations

import dataclasses

import pytest

from ingestion import config
from ingestion.config import ConfigError, load_tables
from ingestion.settings import settings
from ingestion.sources.kafka import OffsetRange, plan_ranges


def test_first_run_reads_every_partition_from_its_earliest_offset() -> None:
    batch = plan_ranges("t", {0: (0, 5), 1: (3, 3), 2: (4, 9)}, {})
    assert batch.items == (OffsetRange(0, 0, 5), OffsetRange(2, 4, 9))
    assert batch.checkpoint.offsets == {0: 4, 1: 2, 2: 8}


def test_next_run_reads_past_the_checkpoint_only() -> None:
    batch = plan_ranges("t", {0: (0, 12), 1: (0, 7)}, {0: 4, 1: 6})
    assert batch.items == (OffsetRange(0, 5, 12),)
    assert batch.checkpoint.offsets == {0: 11, 1: 6}


def test_nothing_new_is_an_empty_batch_with_the_same_checkpoint() -> None:
    batch = plan_ranges("t", {0: (0, 5)}, {0: 4})
    assert batch.empty
    assert batch.checkpoint.offsets == {0: 4}


def test_records_removed_by_retention_are_skipped_not_awaited() -> None:
    batch = plan_ranges("t", {0: (10, 15)}, {0: 3})
    assert batch.items == (OffsetRange(0, 10, 15),)


def test_an_absent_topic_plans_nothing() -> None:
    assert plan_ranges("t", {}, {}).empty


def _with_kinds(monkeypatch, kinds: dict[str, str]) -> None:
    patched = dataclasses.replace(settings(), source_kinds=kinds)
    monkeypatch.setattr(config, "settings", lambda: patched)


def test_source_kinds_setting_overrides_the_table_config(monkeypatch) -> None:
    assert {t.source.kind for t in load_tables().values()} == {"landing"}
    _with_kinds(monkeypatch, {"ems": "kafka", "ecomm": "kafka"})
    kinds = {t.name: t.source.kind for t in load_tables().values()}
    assert kinds == {
        "category": "kafka", "event": "kafka", "venue": "kafka", "date": "kafka",
        "listing": "kafka", "sales": "kafka", "users": "landing",
    }  # fmt: skip


def test_source_kafka_formats_setting_overrides_the_table_config(monkeypatch) -> None:
    patched = dataclasses.replace(
        settings(), source_kafka_formats={"ecomm": "avro", "another_project_s": "avro"}
    )
    monkeypatch.setattr(config, "settings", lambda: patched)
    formats = {t.source.name: t.source.kafka_format for t in load_tables().values()}
    assert formats == {"ems": "json", "ecomm": "avro", "crm": "json"}
    patched = dataclasses.replace(settings(), source_kafka_formats={"ems": "protobuf"})
    monkeypatch.setattr(config, "settings", lambda: patched)
    with pytest.raises(ConfigError, match="'protobuf' is not one of json, avro"):
        load_tables()


def test_unknown_source_or_kind_is_a_config_error(monkeypatch) -> None:
    _with_kinds(monkeypatch, {"erp": "kafka"})
    with pytest.raises(ConfigError, match="names unknown source"):
        load_tables()
    _with_kinds(monkeypatch, {"ems": "kinesis"})
    with pytest.raises(ConfigError, match="'kinesis' is not one of landing, kafka"):
        load_tables()
