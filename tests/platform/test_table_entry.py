"""`lakehouse tables add` without a database: the type mapping, the entry's YAML, the append.

The catalog reading itself runs on the live chain (tests/cdc/test_own_table_guide.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from ingestion.config import TABLES_FILE, load_tables
from ingestion.decode.types import parse_config_type
from ingestion.errors import UserError
from ingestion.settings import settings
from lakehouse import cli, dbt_sources, table_entry
from lakehouse.cdc import catalog
from lakehouse.cdc.catalog import CatalogColumn, CatalogTable, ConnectorModes

PG = ConnectorModes(catalog.POSTGRES, "tickit", interval_handling="string", captured=("ems",))
MARIADB = ConnectorModes(
    catalog.MARIADB,
    "tickit",
    time_precision="adaptive_time_microseconds",
    bigint_unsigned="precise",
    boolean_columns=(r"ecomm\.t\.flag",),
    captured=("ecomm",),
)


def pg(base: str, **values) -> str | None:
    return catalog.config_type(CatalogColumn("c", base, **values), PG, "ems.t")


def maria(column_type: str, name: str = "c", **values) -> str | None:
    """The type of a column as MariaDB's information_schema.columns row has it."""
    base = column_type.split("(")[0].split()[0]
    row = (name, base, column_type.upper(), values.get("precision"), values.get("scale"),
           values.get("datetime_precision"), None)  # fmt: skip
    return catalog.config_type(catalog._mariadb_column(row), MARIADB, "ecomm.t")


def test_postgres_types_map_to_what_debezium_emits_with_the_connector_settings() -> None:
    assert [pg("int2"), pg("int4"), pg("int8"), pg("float4"), pg("float8")] == [
        "int16", "int32", "int64", "float32", "float64",
    ]  # fmt: skip
    assert pg("numeric", precision=10, scale=3) == "decimal(10,3)"
    assert pg("numeric") == "numeric"  # unbounded: VariableScaleDecimal, exact text
    assert pg("timestamp", datetime_precision=3) == "timestamp_ms"
    assert pg("timestamp", datetime_precision=6) == "timestamp_us"
    assert pg("timestamptz", datetime_precision=6) == "timestamp_tz"
    assert [pg("time", datetime_precision=2), pg("time", datetime_precision=6)] == [
        "time_ms", "time_us",
    ]  # fmt: skip
    assert [pg("date"), pg("interval"), pg("bytea"), pg("bool")] == [
        "date", "string", "bytes", "boolean",
    ]  # fmt: skip
    assert [pg("jsonb"), pg("uuid"), pg("xml"), pg("varchar"), pg("bpchar")] == ["string"] * 5
    assert pg("_int4", kind="array") == "string"
    assert pg("mood", kind="enum") == "string"
    assert [pg("bit", precision=1), pg("bit", precision=8)] == ["boolean", "bytes"]
    assert [pg("point"), pg("geometry")] == ["point", "geometry"]
    assert pg("money") is None  # not mapped: left out, with a warning


def test_mariadb_types_map_to_what_debezium_emits_with_the_connector_settings() -> None:
    assert maria("tinyint(1)", name="flag") == "boolean"  # the converter selects it
    assert maria("tinyint(1)", name="other") == "int16"
    assert [maria("tinyint(4)"), maria("smallint(6)"), maria("smallint(5) unsigned")] == [
        "int16", "int16", "int32",
    ]  # fmt: skip
    assert [maria("int(11)"), maria("int(10) unsigned"), maria("mediumint(9)")] == [
        "int32", "int64", "int32",
    ]  # fmt: skip
    assert maria("bigint(20)") == "int64"
    assert maria("bigint(20) unsigned") == "decimal(20,0)"
    assert maria("decimal(8,2)", precision=8, scale=2) == "decimal(8,2)"
    assert [maria("float"), maria("float(7,2)"), maria("double")] == [
        "float32", "float64", "float64",
    ]  # fmt: skip
    assert maria("datetime", datetime_precision=0) == "timestamp_ms"
    assert maria("datetime(3)", datetime_precision=3) == "timestamp_ms"
    assert maria("datetime(6)", datetime_precision=6) == "timestamp_us"
    assert maria("timestamp", datetime_precision=0) == "timestamp_tz"
    assert maria("time", datetime_precision=0) == "time_us"  # adaptive_time_microseconds
    assert [maria("date"), maria("year(4)"), maria("bit(1)"), maria("bit(9)")] == [
        "date", "int32", "boolean", "bytes",
    ]  # fmt: skip
    assert [maria("enum('a','b')"), maria("set('x')"), maria("longtext")] == ["string"] * 3
    assert [maria("varbinary(16)"), maria("blob"), maria("point")] == [
        "bytes", "bytes", "point",
    ]  # fmt: skip


def test_every_mapped_type_is_one_the_table_config_accepts() -> None:
    names = {value for value in catalog.TYPE_MAP.values() if isinstance(value, str)}
    names |= {"decimal(20,0)", "numeric", "timestamp_ms", "time_ms", "float32", "int16"}
    for name in sorted(names):
        parse_config_type(name)  # raises on a name the config does not know


def test_connector_modes_are_read_from_the_chain_connectors() -> None:
    ems = table_entry.connector_modes(settings(), "ems")
    ecomm = table_entry.connector_modes(settings(), "ecomm")
    assert (ems.dialect, ems.topic_prefix, ems.captured) == (catalog.POSTGRES, "tickit", ("ems",))
    assert ems.time_precision == "adaptive" and ems.boolean_columns is None
    assert (ecomm.dialect, ecomm.captured) == (catalog.MARIADB, ("ecomm",))
    # The converter's selector holds the booleans conf/tables.yml declares.
    assert r"ecomm\.date\.holiday" in (ecomm.boolean_columns or ())
    with pytest.raises(UserError, match="source 'crm' has no connector"):
        table_entry.connector_modes(settings(), "crm")


def orders(key: tuple[str, ...] = ("order_id",), identity: str = "default") -> CatalogTable:
    columns = (
        CatalogColumn("order_id", "int4"),
        CatalogColumn("amount", "numeric", precision=10, scale=2),
        CatalogColumn("placed_at", "timestamptz"),
        CatalogColumn("note", "text"),
    )
    return CatalogTable("ems", catalog.POSTGRES, "ems", "orders", columns, key, identity)


EXPECTED = """\
  orders:
    source: ems
    topic: tickit.ems.orders
    key: [order_id]
    columns:
      order_id: int32
      amount: decimal(10,2)
      placed_at: timestamp_tz
      note: string
"""


def test_entry_renders_in_the_config_style_with_the_replica_identity_warning() -> None:
    entry, warnings = table_entry.build_entry(orders(), PG, None)
    assert table_entry.render(entry) == EXPECTED
    assert warnings == [
        "ems.orders has REPLICA IDENTITY DEFAULT: run `ALTER TABLE ems.orders REPLICA IDENTITY "
        "FULL;` so that updates and deletes carry whole before-images and unchanged TOAST "
        "values (long text, jsonb) arrive, not a placeholder"
    ]
    _, none = table_entry.build_entry(orders(identity="full"), PG, None)
    assert none == []


def test_a_table_without_a_primary_key_is_refused_unless_the_key_is_given() -> None:
    with pytest.raises(UserError, match=r"ems.orders has no primary key: .* --key COLUMN"):
        table_entry.build_entry(orders(key=()), PG, None)
    entry, _ = table_entry.build_entry(orders(key=()), PG, "orders_v2", ("order_id", "note"))
    assert (entry.name, entry.key) == ("orders_v2", ("order_id", "note"))
    with pytest.raises(UserError, match=r"no .*column nope"):
        table_entry.build_entry(orders(key=()), PG, None, ("nope",))


def test_append_keeps_the_file_and_its_comments_and_refuses_a_table_twice(tmp_path: Path) -> None:
    path = tmp_path / "tables.yml"
    shutil.copy(TABLES_FILE, path)
    before = path.read_text()
    entry, _ = table_entry.build_entry(orders(identity="full"), PG, None)
    table_entry.append(entry, table_entry.render(entry), path)
    assert path.read_text() == before.rstrip("\n") + "\n\n" + EXPECTED
    loaded = load_tables(path)["orders"]
    assert (loaded.topic, loaded.key, loaded.source.name) == (
        "tickit.ems.orders",
        ("order_id",),
        "ems",
    )
    assert loaded.columns["amount"].spark_type == "decimal(10,2)"
    with pytest.raises(UserError, match="table 'orders' already exists"):
        table_entry.append(entry, table_entry.render(entry), path)
    venue = table_entry.TableEntry("venue2", "ems", "tickit.ems.venue", ("venueid",), {})
    with pytest.raises(UserError, match=r"table 'venue' already reads topic tickit\.ems\.venue"):
        table_entry.append(venue, table_entry.render(venue), path)
    assert len(list(tmp_path.iterdir())) == 1  # no temporary file left behind


def test_dbt_sources_add_the_columns_bronze_holds_beyond_the_config(capsys, monkeypatch) -> None:
    text = dbt_sources.SOURCES_FILE.read_text()
    tables = load_tables()
    held = {"listing": {"listid": "int", "channel": "string", "_cdc_op": "string"}}
    rendered = dbt_sources.render(text, tables, held)
    (source,) = yaml.safe_load(rendered)["sources"]
    listing = next(t for t in source["tables"] if t["name"] == "listing")
    names = [c["name"] for c in listing["columns"]]
    assert names[: len(tables["listing"].columns) + 1] == [*tables["listing"].columns, "channel"]
    channel = listing["columns"][names.index("channel")]
    evolved = {"meta": {"schema_evolution": True}}
    assert channel == {
        "name": "channel",
        "data_type": "string",
        "description": "",
        "config": evolved,
    }
    assert names.count("_cdc_op") == 1
    assert dbt_sources.render(rendered, tables, held) == rendered
    assert dbt_sources.missing_columns(text, held) == ("listing.channel",)
    assert dbt_sources.missing_columns(rendered, held) == ()
    monkeypatch.setattr(dbt_sources, "bronze_columns", lambda _tables: held)
    assert cli.main(["dbt-sources", "--check"]) == 1
    assert "bronze holds listing.channel" in capsys.readouterr().err
