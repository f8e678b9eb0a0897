"""The project's one HiveServer2 client: SQL through the Spark Thrift Server over PyHive.

The stack's health check, the tests and the dashboard all query the same
server; one client means one place for the connection settings and for what a
failure means: `ThriftUnreachable` (no server: start the stack) differs from
`QueryFailed` (the server answered with an error), so each caller can say
what to do about it.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from ingestion.errors import UserError
from ingestion.settings import Settings, settings

# PyHive cannot fetch the empty result sets of these statements.
NO_RESULT_STATEMENTS = ("create", "drop", "insert", "alter", "set", "use", "delete", "merge")


class ThriftUnreachable(UserError):
    """Nothing answers on the Thrift server's host and port."""


class QueryFailed(UserError):
    """The Thrift server ran the statement and reported an error (Spark's message)."""


@dataclass(frozen=True)
class Result:
    """A statement's rows and their column names (bare names, without a table alias)."""

    columns: list[str]
    rows: list[tuple]


def address(conf: Settings) -> str:
    """host:port of the Thrift server, as messages show it."""
    return f"{conf.thrift_host}:{conf.thrift_port}"


def require_server(conf: Settings | None = None) -> None:
    """Fail with one line when nothing listens on the Thrift server's port."""
    conf = conf or settings()
    try:
        with socket.create_connection((conf.thrift_host, conf.thrift_port), timeout=3):
            return
    except OSError as error:
        raise ThriftUnreachable(
            f"the Spark Thrift Server at {address(conf)} is not reachable "
            f"({error.strerror or error}): start it with `lakehouse stack up` "
            "(port: LAKEHOUSE_THRIFT_PORT)"
        ) from None


def execute(sql: str, conf: Settings | None = None) -> Result:
    """Run one statement on the settings' Thrift server and fetch what it returns."""
    from pyhive import exc, hive
    from thrift.transport.TTransport import TTransportException

    conf = conf or settings()
    try:
        connection = hive.connect(
            host=conf.thrift_host,
            port=conf.thrift_port,
            username=os.environ.get("USER", "lakehouse"),
        )
    except (TTransportException, OSError) as error:
        raise ThriftUnreachable(
            f"The Spark Thrift Server at {address(conf)} is not reachable ({error})."
        ) from error
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        if not cursor.description or sql.lstrip().lower().startswith(NO_RESULT_STATEMENTS):
            return Result([], [])
        rows = cursor.fetchall()
        # Hive may prefix names with the table alias ("t.col"); callers use the bare name.
        columns = [column[0].rsplit(".", 1)[-1] for column in cursor.description]
    except exc.Error as error:
        raise QueryFailed(str(error)) from error
    finally:
        connection.close()
    return Result(columns, rows)
