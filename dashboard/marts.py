"""Read the marts through the Spark Thrift Server into data frames.

Plain Python (no Streamlit) so it is testable on its own. The marts' schema is
the `marts_schema` setting, the one dbt builds them in, and the queries go
through the project's one Thrift client. Failures become a `MartsUnavailable`
whose message tells the reader what to run, because a dashboard user should
see "build the marts", not a Thrift stack trace.
"""

from __future__ import annotations

import pandas as pd

from ingestion.settings import Settings, settings
from lakehouse import thrift_client

# Spark's messages for a missing table or schema.
MISSING_MARKERS = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "Table or view not found")


class MartsUnavailable(Exception):
    """The marts cannot be read; the message says why and what to run."""


class NotBuilt(MartsUnavailable):
    """The table or its schema does not exist yet."""


def table(name: str, conf: Settings | None = None) -> str:
    """A mart's qualified name, `<marts_schema>.<name>`, for the pages' SQL."""
    return f"{(conf or settings()).marts_schema}.{name}"


def read(sql: str, conf: Settings | None = None) -> pd.DataFrame:
    """Run one query and return its rows with their column names."""
    conf = conf or settings()
    where = thrift_client.address(conf)
    try:
        result = thrift_client.execute(sql, conf)
    except thrift_client.ThriftUnreachable as error:
        raise MartsUnavailable(f"{error} Start it with `lakehouse stack up`.") from error
    except thrift_client.QueryFailed as error:
        text = str(error)
        if any(marker in text for marker in MISSING_MARKERS):
            raise NotBuilt(
                f"The marts in `{conf.marts_schema}` are not built yet on {where}. "
                "Build them with `lakehouse jobs run daily` (or `lakehouse run`)."
            ) from error
        raise MartsUnavailable(f"The query on {where} failed: {text[:500]}") from error
    return pd.DataFrame.from_records(result.rows, columns=result.columns)
