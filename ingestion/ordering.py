"""Source positions: one string per event whose order is the source's commit order.

Each connector states where a change sits in its database's log differently:
PostgreSQL an LSN, MySQL a binlog file, position and row, SQL Server a commit
LSN, change LSN and event serial number. Zero-padding each part makes plain
string comparison agree with commit order, so one Hudi ordering field works for
every table. The pure function and the Spark expression are kept side by side
and tested against each other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

ZERO_LSN = "00000000:00000000:0000"
_DIGITS = re.compile(r"(\d+)$")


def _pad(value: object, width: int) -> str:
    text = "" if value is None else str(value)
    return text.rjust(width, "0")


def position_key(connector: str, source: Mapping[str, object]) -> str:
    """The sortable position of one event, from its `source` block (pure Python)."""
    if connector == "postgresql":
        return _pad(source.get("lsn"), 20)
    if connector == "mysql":
        match = _DIGITS.search(str(source.get("file") or ""))
        return ":".join(
            [
                _pad(match.group(1) if match else None, 10),
                _pad(source.get("pos"), 20),
                _pad(source.get("row"), 10),
            ]
        )
    if connector == "sqlserver":
        return ":".join(
            [
                str(source.get("commit_lsn") or ZERO_LSN).lower(),
                str(source.get("change_lsn") or ZERO_LSN).lower(),
                _pad(source.get("event_serial_no"), 10),
            ]
        )
    raise ValueError(f"unknown connector '{connector}'")


def _lpad(value: Column, width: int) -> Column:
    return F.lpad(F.coalesce(value.cast("string"), F.lit("")), width, "0")


def position_column(connector: str, source: Column) -> Column:
    """The same position as `position_key`, as a Spark expression over a map<string,string>."""
    if connector == "postgresql":
        return _lpad(source["lsn"], 20)
    if connector == "mysql":
        binlog_number = F.regexp_extract(F.coalesce(source["file"], F.lit("")), r"(\d+)$", 1)
        return F.concat_ws(
            ":", _lpad(binlog_number, 10), _lpad(source["pos"], 20), _lpad(source["row"], 10)
        )
    if connector == "sqlserver":
        return F.concat_ws(
            ":",
            F.lower(F.coalesce(source["commit_lsn"], F.lit(ZERO_LSN))),
            F.lower(F.coalesce(source["change_lsn"], F.lit(ZERO_LSN))),
            _lpad(source["event_serial_no"], 10),
        )
    raise ValueError(f"unknown connector '{connector}'")


def connector_of(source: Mapping[str, object]) -> str:
    """The connector that wrote a source block: named, or told by its position fields."""
    named = str(source.get("connector") or "")
    if named in ("postgresql", "mysql", "sqlserver"):
        return named
    if source.get("commit_lsn") is not None or source.get("change_lsn") is not None:
        return "sqlserver"
    if source.get("file") is not None or source.get("pos") is not None:
        return "mysql"
    return "postgresql"


def any_position_column(source: Column) -> Column:
    """`position_column` for files whose connector is not configured (`cdc decode`)."""
    return (
        F.when(
            (source["connector"] == "sqlserver") | source["commit_lsn"].isNotNull(),
            position_column("sqlserver", source),
        )
        .when(
            (source["connector"] == "mysql") | source["file"].isNotNull(),
            position_column("mysql", source),
        )
        .otherwise(position_column("postgresql", source))
    )
