"""Your own table on the live chain: `lakehouse tables add`, `cdc sql`, and docs/own-tables.md.

The guide's ```sh blocks run as written, in order, in a copy of the project
(LAKEHOUSE_PROJECT_DIR: its conf/tables.yml and dbt sources are the copy's),
into a bronze database and dbt schema of their own. Between a change and an
ingest the test waits until Debezium has published (the chain's markers), as
a person would run the ingest again.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import yaml

from ingestion.config import load_tables
from ingestion.paths import table_path, to_hadoop_uri
from ingestion.settings import settings
from lakehouse import cli, table_entry
from lakehouse.cdc import markers
from tests.cdc.live import Live
from tests.guides import REPO, code_blocks, project_copy

GUIDE = REPO / "docs" / "own-tables.md"
BRONZE = "it_guide_bronze"
DBT_SCHEMA = "it_guide"
ORDERS_ENTRY = """\
  orders:
    source: ems
    topic: tickit.ems.orders
    key: [order_id]
    columns:
      order_id: int32
      customer: string
      amount: decimal(10,2)
      placed_at: timestamp_tz
      shipped_on: date
"""


def lakehouse(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "lakehouse.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_tables_add_reads_the_catalog_of_both_databases(live_chain: Live, capsys) -> None:
    created = lakehouse("cdc", "sql", "ems", "-c", """
        create table ems.it_gadgets (
            id smallint primary key, counter bigint, ratio numeric, made_at timestamp(3),
            opens time, lasts interval, spec jsonb, tags integer[], blob bytea, ok boolean
        );
        create table ems.it_nokey (a integer)""")  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert cli.main(["tables", "add", "--source", "ems", "--table", "ems.it_gadgets"]) == 0
    out, err = capsys.readouterr()
    assert out == (
        "  it_gadgets:\n    source: ems\n    topic: tickit.ems.it_gadgets\n    key: [id]\n"
        "    columns:\n      id: int16\n      counter: int64\n      ratio: numeric\n"
        "      made_at: timestamp_ms\n      opens: time_us\n      lasts: string\n"
        "      spec: string\n      tags: string\n      blob: bytes\n      ok: boolean\n"
    )
    assert err.splitlines() == [
        "warning: ems.it_gadgets has REPLICA IDENTITY DEFAULT: run `ALTER TABLE ems.it_gadgets "
        "REPLICA IDENTITY FULL;` so that updates and deletes carry whole before-images and "
        "unchanged TOAST values (long text, jsonb) arrive, not a placeholder"
    ]
    assert cli.main(["tables", "add", "--source", "ems", "--table", "ems.it_nokey"]) == 2
    assert "ems.it_nokey has no primary key" in capsys.readouterr().err

    created = lakehouse("cdc", "sql", "ecomm", "-e", """
        create table ecomm.it_gadgets (
            id bigint unsigned primary key, flag tinyint(1), made_at datetime(6),
            price decimal(8,2), size enum('s','m'), note varchar(10) character set utf8mb4, raw blob
        )""")  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert cli.main(["tables", "add", "--source", "ecomm", "--table", "it_gadgets"]) == 0
    out, err = capsys.readouterr()
    assert yaml.safe_load(out)["it_gadgets"] == {
        "source": "ecomm",
        "topic": "tickit.ecomm.it_gadgets",
        "key": ["id"],
        "columns": {
            "id": "decimal(20,0)",
            "flag": "int16",
            "made_at": "timestamp_us",
            "price": "decimal(8,2)",
            "size": "string",
            "note": "string",
            "raw": "bytes",
        },
    }
    assert "ecomm.it_gadgets.flag is TINYINT(1), written as int16" in err
    asked = lakehouse("cdc", "sql", "ecomm", "-e", "select 'é' as letter")
    assert asked.returncode == 0 and asked.stdout.split() == ["letter", "é"], asked


def test_tables_add_selects_a_whole_schema_by_pattern(
    live_chain: Live, tmp_path: Path, capsys
) -> None:
    tables = "; ".join(
        f"create table ems.it_app_{n:02d} (id integer primary key, name text, at timestamptz)"
        for n in range(1, 21)
    )
    created = lakehouse(
        "cdc", "sql", "ems", "-c", tables + "; create table ems.it_app_log (line text)"
    )
    assert created.returncode == 0, created.stderr
    shop = "; ".join(
        f"create table ecomm.it_shop_{c} (sku int primary key, qty int)" for c in "abc"
    )
    created = lakehouse("cdc", "sql", "ecomm", "-e", shop)
    assert created.returncode == 0, created.stderr
    config = tmp_path / "tables.yml"
    shutil.copy(REPO / "conf" / "tables.yml", config)

    chosen = table_entry.add_tables(
        settings(), "ems", (r"ems\.it_app_.*",), (r"EMS\.it_app_20",), write_to=config
    )
    assert [t.entry.name for t in chosen.added] == [f"it_app_{n:02d}" for n in range(1, 20)]
    [left_out] = chosen.left_out
    assert left_out.startswith("ems.it_app_log: no primary key") and "--key COLUMN" in left_out
    shops = table_entry.add_tables(settings(), "ecomm", (r"ecomm\.it_shop_[a-z]",), write_to=config)
    assert [t.entry.topic for t in shops.added] == [f"tickit.ecomm.it_shop_{c}" for c in "abc"]
    written = load_tables(config)
    assert (written["it_app_07"].topic, written["it_app_07"].key) == (
        "tickit.ems.it_app_07",
        ("id",),
    )
    entry = yaml.safe_load(config.read_text())["tables"]["it_app_07"]
    assert entry["columns"] == {"id": "int32", "name": "string", "at": "timestamp_tz"}
    assert "it_app_20" not in written and written["category"].topic == "tickit.ems.category"
    again = table_entry.add_tables(settings(), "ems", (r"ems\.it_app_.*",), write_to=config)
    # The configured tables are kept as they are; the one excluded before is new now.
    assert [t.entry.name for t in again.added] == ["it_app_20"] and len(again.left_out) == 1

    assert cli.main(["tables", "add", "--source", "ecomm", "--include", r"ecomm\.it_shop_b"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == {
        "it_shop_b": {
            "source": "ecomm", "topic": "tickit.ecomm.it_shop_b", "key": ["sku"],
            "columns": {"sku": "int32", "qty": "int32"},
        }
    }  # fmt: skip
    assert cli.main(["tables", "add", "--source", "ems", "--include", "ems\\.(unclosed"]) == 2
    assert "pattern 'ems\\\\.(unclosed'" in capsys.readouterr().err


def run_guide(spark, root: Path) -> list[subprocess.CompletedProcess]:
    env = {
        **os.environ,
        "LAKEHOUSE_PROJECT_DIR": str(root),
        "LAKEHOUSE_BRONZE_DATABASE": BRONZE,
        "LAKEHOUSE_DBT_SCHEMA": DBT_SCHEMA,
        "LAKEHOUSE_DBT_TARGET_PATH": str(root / "target"),
    }
    done = []
    for block in (b.text for b in code_blocks(GUIDE, "sh")):
        if "lakehouse ingest" in block:
            markers.wait_published(spark, settings(), markers.write_markers(settings()))
        command = ["bash", "-e", "-o", "pipefail", "-c", block]
        ran = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, timeout=900
        )
        assert ran.returncode == 0, (block, ran.stdout[-2000:], ran.stderr[-2000:])
        done.append(ran)
    return done


def test_the_guide_runs_as_written(spark, live_chain: Live, tmp_path: Path) -> None:
    root = project_copy(tmp_path / "project")
    ran = run_guide(spark, root)
    preview = next(r for r in ran if "tables add" in r.args[-1] and "--write" not in r.args[-1])
    assert (preview.stdout, preview.stderr) == (ORDERS_ENTRY, "")  # identity FULL: no warning
    tables_file = root / "conf" / "tables.yml"
    assert tables_file.read_text().endswith("\n\n" + ORDERS_ENTRY)
    assert load_tables(tables_file)["orders"].key == ("order_id",)
    assert "bronze holds orders.coupon" in ran[-1].stderr  # --check failed, then wrote

    path = to_hadoop_uri(table_path(settings(), BRONZE, "orders"))
    columns = ["order_id", "customer", "amount", "shipped_on", "coupon", "_cdc_is_deleted"]
    rows = spark.read.format("hudi").load(path).select(*columns).orderBy("order_id").collect()
    assert [tuple(row) for row in rows] == [
        (1, "ada", Decimal("12.50"), datetime.date(2024, 5, 3), None, False),
        (2, "grace", Decimal("99.99"), None, None, False),
        (3, "linus", Decimal("5.00"), None, "SPRING", False),
    ]
    staged = spark.sql(
        f"select order_id, amount_usd from {DBT_SCHEMA}_staging.stg_tickit__orders order by 1"
    ).collect()
    assert [tuple(row) for row in staged] == [
        (1, Decimal("12.50")), (2, Decimal("99.99")), (3, Decimal("5.00")),
    ]  # fmt: skip
    (source,) = yaml.safe_load((root / dbt_sources_file()).read_text())["sources"]
    orders = next(t for t in source["tables"] if t["name"] == "orders")
    coupon = next(c for c in orders["columns"] if c["name"] == "coupon")
    assert coupon["data_type"] == "string" and coupon["config"]["meta"]["schema_evolution"]


def dbt_sources_file() -> Path:
    return Path("models/staging/tickit/_tickit__sources.yml")
