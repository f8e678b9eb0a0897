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
from typing import Any

from ingestion.errors import UserError
from ingestion.settings import Settings, settings

# PyHive cannot fetch the empty result sets of these statements.
NO_RESULT_STATEMENTS = ("create", "drop", "insert", "alter", "set", "use", "delete", "merge")


class ThriftUnreachable(UserError):
    """Nothing answers on the Thrift server's host and port."""


class QueryFailed(UserError):
    """The Thrift server ran the statement and reported an error (Spark's message)."""


class NoAnswer(ThriftUnreachable):
    """The server accepted the connection but did not answer within the deadline."""


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


class Connection:
    """One server session for many statements, for a caller that queries again and again.

    Every statement on a fresh connection also opens a session on the server
    (a Spark session of its own there): a key lookup in a --scale 1 bronze
    table cost the server 0.20 s of CPU that way, and 0.12 s on an open one.
    Not shared between threads. With `timeout`, every read from the server
    has that many seconds (the health check: a server that holds its port but
    answers nothing raises `NoAnswer` instead of hanging its caller).
    """

    def __init__(self, conf: Settings | None = None, timeout: float | None = None) -> None:
        from pyhive import hive
        from thrift.transport.TTransport import TTransportException

        self.conf = conf or settings()
        self.timeout = timeout
        try:
            self._connection = hive.connect(thrift_transport=_transport(self.conf, timeout))
        except (TTransportException, OSError) as error:
            self._raise_for(error)
            raise ThriftUnreachable(
                f"The Spark Thrift Server at {address(self.conf)} is not reachable ({error})."
            ) from error

    def _raise_for(self, error: Exception) -> None:
        """Raise `NoAnswer` when the error is a read that timed out."""
        from thrift.transport.TTransport import TTransportException

        timed_out = isinstance(error, TimeoutError) or (
            isinstance(error, TTransportException) and error.type == TTransportException.TIMED_OUT
        )
        if timed_out:
            raise NoAnswer(
                f"The Spark Thrift Server at {address(self.conf)} did not answer "
                f"in {self.timeout} s."
            ) from error

    def execute(self, sql: str) -> Result:
        """Run one statement, fetch what it returns, and close it on the server.

        The server keeps a statement's operation, with its whole result and
        query plan, until the client closes it or the session ends: on a
        connection that lives for hours, statements left open were what filled
        the Thrift server's heap (docs/decisions/0016-thrift-operations-closed.md).
        """
        from pyhive import exc

        cursor = self._connection.cursor()
        try:
            result = self._fetch(cursor, sql)
        except exc.Error as error:
            self._close(cursor)
            raise QueryFailed(str(error)) from error
        except Exception as error:  # a transport error: a timed-out read is NoAnswer
            self._raise_for(error)
            raise
        self._close(cursor)
        return result

    @staticmethod
    def _fetch(cursor: Any, sql: str) -> Result:
        cursor.execute(sql)
        if not cursor.description or sql.lstrip().lower().startswith(NO_RESULT_STATEMENTS):
            return Result([], [])
        rows = cursor.fetchall()
        # Hive may prefix names with the table alias ("t.col"); callers use the bare name.
        return Result([column[0].rsplit(".", 1)[-1] for column in cursor.description], rows)

    def _close(self, cursor: Any) -> None:
        """Close the statement's operation (PyHive's CloseOperation), as a timed-out read tells."""
        try:
            cursor.close()
        except Exception as error:
            self._raise_for(error)
            raise

    def close(self) -> None:
        """Close the session; on a server that stopped answering, just the socket."""
        try:
            self._connection.close()
        except Exception as error:
            self._connection._transport.close()
            try:
                self._raise_for(error)
            except NoAnswer:
                return  # the caller has been told already, by its statement's NoAnswer
            raise

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _transport(conf: Settings, timeout: float | None) -> object:
    """PyHive's own transport for a server without authentication (SASL PLAIN over a
    socket), with a read deadline on the socket when `timeout` is given."""
    import thrift_sasl
    from pyhive.hive import get_installed_sasl
    from thrift.transport.TSocket import TSocket

    socket_ = TSocket(conf.thrift_host, conf.thrift_port)
    if timeout is not None:
        socket_.setTimeout(timeout * 1000)
    username = os.environ.get("USER", "lakehouse")
    return thrift_sasl.TSaslClientTransport(
        lambda: get_installed_sasl(
            host=conf.thrift_host, sasl_auth="PLAIN", username=username, password="x"
        ),
        "PLAIN",
        socket_,
    )


def execute(sql: str, conf: Settings | None = None) -> Result:
    """Run one statement on the settings' Thrift server, on a connection of its own."""
    with Connection(conf) as connection:
        return connection.execute(sql)
