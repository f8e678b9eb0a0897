"""The dbt project agrees with its configuration: pure Python, no Spark, no dbt run.

The bronze sources are generated from the table config (`lakehouse dbt-sources`);
these tests fail when the checked-in file is stale, show that a config change
reaches the file, and that the hand-written parts survive a regeneration.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from ingestion.config import load_tables
from ingestion.decode.types import parse_config_type
from ingestion.settings import PROJECT_DIR
from lakehouse import cli, dbt_sources


def source_tables(text: str) -> dict[str, dict[str, Any]]:
    (source,) = yaml.safe_load(text)["sources"]
    return {table["name"]: table for table in source["tables"]}


def test_sources_file_is_what_the_table_config_generates() -> None:
    text = dbt_sources.SOURCES_FILE.read_text()
    assert dbt_sources.render(text, load_tables()) == text, "run `lakehouse dbt-sources`"
    assert cli.main(["dbt-sources", "--check"]) == 0


def test_every_configured_table_column_type_and_key_is_in_the_sources() -> None:
    declared = source_tables(dbt_sources.SOURCES_FILE.read_text())
    for name, table in load_tables().items():
        source = declared[name]
        columns = {column["name"]: column for column in source["columns"]}
        assert list(columns)[: len(table.columns)] == list(table.columns)
        for column, field in table.columns.items():
            assert columns[column]["data_type"] == field.spark_type, (name, column)
            assert columns[column]["description"].strip(), (name, column)
        (key,) = table.key
        assert {"unique", "not_null"} <= set(columns[key]["data_tests"])
        assert source["config"]["meta"]["record_key"] == [key]
        assert source["config"]["meta"]["topic"] == table.topic


def test_a_config_change_reaches_the_sources_and_keeps_what_was_written_by_hand() -> None:
    text = dbt_sources.SOURCES_FILE.read_text()
    tables = load_tables()
    sales = tables["sales"]
    changed = {
        **{name: table for name, table in tables.items() if name != "venue"},
        "sales": dataclasses.replace(
            sales,
            topic="tickit.ecomm.sale_v2",
            columns={
                **{c: t for c, t in sales.columns.items() if c != "commission"},
                "pricepaid": parse_config_type("decimal(10,2)"),
                "discount": parse_config_type("int16"),
            },
        ),
    }
    rendered = dbt_sources.render(text, changed)
    assert rendered != text
    before, after = source_tables(text), source_tables(rendered)
    assert "venue" not in after
    columns = {column["name"]: column for column in after["sales"]["columns"]}
    assert "commission" not in columns
    assert columns["pricepaid"]["data_type"] == "decimal(10,2)"
    assert columns["discount"] == {"name": "discount", "data_type": "int", "description": ""}
    assert after["sales"]["config"]["meta"]["topic"] == "tickit.ecomm.sale_v2"
    # Hand-written: descriptions, tests, the users' evolved column, the changelog.
    assert after["sales"]["description"] == before["sales"]["description"]
    assert after["sales"]["data_tests"] == before["sales"]["data_tests"]
    assert columns["salesid"] == before["sales"]["columns"][0]
    assert after["users"] == before["users"]
    assert after["users_changelog"] == before["users_changelog"]
    assert dbt_sources.render(rendered, changed) == rendered


def test_the_deleted_records_test_lists_the_configured_tables() -> None:
    """The one list of bronze tables in dbt comes from the config, never written out."""
    models = yaml.safe_load((PROJECT_DIR / "models/staging/tickit/_tickit__models.yml").read_text())
    deleted = next(m for m in models["models"] if m["name"] == "stg_tickit__deleted_records")
    bronze_table = next(c for c in deleted["columns"] if c["name"] == "bronze_table")
    accepted = next(t for t in bronze_table["data_tests"] if "accepted_values" in t)
    assert "bronze_record_keys()" in accepted["accepted_values"]["arguments"]["values"]


def test_interest_columns_come_from_the_one_interests_list() -> None:
    """SQL renders the likes_* columns with interest_columns(); every yml lists exactly those."""
    project = yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())
    wanted = [f"likes_{interest}" for interest in project["vars"]["interests"]]
    carrying = []
    for path in sorted((PROJECT_DIR / "models").rglob("_*__models.yml")):
        for model in yaml.safe_load(path.read_text()).get("models") or []:
            likes = [c["name"] for c in model["columns"] if c["name"].startswith("likes_")]
            if likes:
                carrying.append(model["name"])
                assert likes == wanted, (path.name, model["name"])
    assert len(carrying) == 7, carrying
    for path in (PROJECT_DIR / "models").rglob("*.sql"):
        assert "likes_" not in path.read_text(), f"{path}: use interest_columns()"
