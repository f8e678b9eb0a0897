"""Merge-on-read bronze under dbt: a change still in a log file is in the marts.

A merge-on-read table's change batches append log files, merged on read until
`lakehouse maintain` compacts them. dbt's sources read the table's own name,
the snapshot (as `<table>_rt` does), never `<table>_ro` (the base files
alone). Here `listing`, `sales` and `users` are merge-on-read in a bronze
database of their own: the snapshot, then one change batch, nothing compacted;
every model is built from it into schemas of their own on the Thrift server,
and the marts equal the generator's expected state.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path

from lakehouse import stack

from ..ingestion.bronze import make_landing, run_ingest, settings_for, tables_for
from .test_marts import check_marts, dbt

DATABASE = "it_mor_bronze"
MERGE_ON_READ = ("listing", "sales", "users")
SCHEMAS = {"dbt_schema": "it_mor", "marts_schema": "it_mor_marts"}


def sales(spark, view: str) -> dict[int, tuple]:
    rows = spark.sql(f"select salesid, qtysold, pricepaid from {DATABASE}.{view}").collect()
    return {row.salesid: (row.qtysold, row.pricepaid) for row in rows}


def test_a_change_still_in_a_log_file_is_in_the_marts(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=0)
    conf = settings_for(landing, tmp_path / "lake")
    tables = [
        dataclasses.replace(table, table_type="mor") if table.name in MERGE_ON_READ else table
        for table in tables_for(DATABASE)
    ]
    run_ingest(spark, conf, tables)
    make_landing(landing, change_batches=1)
    run_ingest(spark, conf, tables)

    # The batch's sales changes are in log files only: the base files still hold the snapshot.
    snapshot, base = sales(spark, "sales"), sales(spark, "sales_ro")
    changed = {key for key in snapshot.keys() | base.keys() if snapshot.get(key) != base.get(key)}
    assert changed and sales(spark, "sales_rt") == snapshot

    marts = SCHEMAS["marts_schema"]
    build = dataclasses.replace(conf, bronze_database=DATABASE, **SCHEMAS)
    dbt(["build", "--exclude", "resource_type:test", "resource_type:unit_test"],
        tmp_path / "target", conf=build)  # fmt: skip
    check_marts(landing, marts)
    keys = ", ".join(str(key) for key in changed)
    columns = "sale_id, quantity_sold, price_paid"
    facts = stack.query(f"select {columns} from {marts}.fct_sales where sale_id in ({keys})")
    # PyHive hands decimals over as strings.
    assert {key: (quantity, Decimal(str(price))) for key, quantity, price in facts} == {
        key: snapshot[key] for key in changed if key in snapshot
    }
