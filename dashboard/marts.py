"""Read the marts through the Spark Thrift Server into data frames.

Plain Python (no Streamlit) so it is testable on its own. Failures become a
`MartsUnavailable` whose message tells the reader what to run, because a
dashboard user should see "build the marts", not a Thrift stack trace.
"""

from __future__ import annotations

import os

import pandas as pd
from pyhive import exc, hive
from thrift.transport.TTransport import TTransportException

from ingestion.settings import Settings, settings

SCHEMA = "tickit_marts"
# Spark's messages for a missing table or schema.
MISSING_MARKERS = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "Table or view not found")


class MartsUnavailable(Exception):
    """The marts cannot be read; the message says why and what to run."""


def read(sql: str, conf: Settings | None = None) -> pd.DataFrame:
    """Run one query over PyHive and return its rows with their column names."""
    conf = conf or settings()
    where = f"{conf.thrift_host}:{conf.thrift_port}"
    try:
        connection = hive.connect(
            host=conf.thrift_host,
            port=conf.thrift_port,
            username=os.environ.get("USER", "lakehouse"),
        )
    except (TTransportException, OSError) as error:
        raise MartsUnavailable(
            f"The Spark Thrift Server at {where} is not reachable ({error}). "
            "Start it with `lakehouse stack up`."
        ) from error
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        rows = cursor.fetchall()
        # Hive may prefix names with the table alias ("t.col"); pages use the bare name.
        columns = [column[0].rsplit(".", 1)[-1] for column in cursor.description or []]
    except exc.Error as error:
        text = str(error)
        if any(marker in text for marker in MISSING_MARKERS):
            raise MartsUnavailable(
                f"The marts in `{SCHEMA}` are not built yet on {where}. "
                "Build them with `lakehouse jobs run daily` (or `lakehouse run`)."
            ) from error
        raise MartsUnavailable(f"The query on {where} failed: {text[:500]}") from error
    finally:
        connection.close()
    return pd.DataFrame.from_records(rows, columns=columns)
