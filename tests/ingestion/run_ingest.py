"""`python -m tests.ingestion.run_ingest DATABASE TABLE FIELD=VALUE... [--maintain]`: one ingest
(or, with --maintain, one maintenance) of a table whose config differs from conf/tables.yml (e.g.
table_type=mor, buckets=none), in a process a test can kill.

Landing zone and lake come from LAKEHOUSE_LANDING / LAKEHOUSE_LAKE, as for `lakehouse ingest`.
"""

from __future__ import annotations

import sys

from ingestion.engine import ingest
from ingestion.maintenance import maintain
from ingestion.settings import settings
from ingestion.spark import build_session

from .bronze import tables_for


def field_value(text: str) -> str | int | None:
    """A FIELD=VALUE's value: `none` for None (no buckets), digits for a number."""
    if text == "none":
        return None
    return int(text) if text.isdigit() else text


def main(database: str, table: str, *changes: str) -> None:
    pairs = (c.split("=", 1) for c in changes if c != "--maintain")
    tables = tables_for(database, (table,), **{name: field_value(value) for name, value in pairs})
    spark = build_session("lakehouse-crash-test")
    run = maintain if "--maintain" in changes else ingest
    run(spark, settings(), tables, log=print)


if __name__ == "__main__":
    main(*sys.argv[1:])
