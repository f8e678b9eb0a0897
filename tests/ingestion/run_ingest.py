"""`python -m tests.ingestion.run_ingest DATABASE TABLE FIELD=VALUE...`: one ingest of a table
whose config differs from conf/tables.yml (e.g. table_type=mor), in a process a test can kill.

Landing zone and lake come from LAKEHOUSE_LANDING / LAKEHOUSE_LAKE, as for `lakehouse ingest`.
"""

from __future__ import annotations

import sys

from ingestion.engine import ingest
from ingestion.settings import settings
from ingestion.spark import build_session

from .bronze import tables_for


def main(database: str, table: str, *changes: str) -> None:
    fields = dict(change.split("=", 1) for change in changes)
    spark = build_session("lakehouse-crash-test")
    ingest(spark, settings(), tables_for(database, (table,), **fields), log=print)


if __name__ == "__main__":
    main(*sys.argv[1:])
