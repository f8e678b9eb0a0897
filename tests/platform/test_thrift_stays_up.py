"""The Thrift server keeps serving under session churn, and its health check means serving.

Each test starts a stack of its own (own home and ports): one wedges or stops
its server on purpose, and the session stack of the other tests must not care.
See docs/decisions/0014-thrift-server-stays-up.md.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from ingestion.settings import Settings, load_settings
from lakehouse import stack, thrift_client

# Sessions opened at once per wave: more than Hive's default kept-alive handler
# threads (5), as a dashboard and a few clients give.
WAVE_WIDTH = 12
WAVES = 10
# A deadline that tells a hang from slowness: a wedged server never answers, while
# a cold server's first metastore calls, twelve at once on a machine the rest of
# the suite keeps busy, have taken over 10 s.
ANSWER_SECONDS = 60
HANDLER_THREAD = re.compile(r'^"HiveServer2-Handler-Pool: Thread-(\d+)"', re.M)


@pytest.fixture
def own_stack(tmp_path, free_port) -> Iterator[Settings]:
    """A stack of its own: idle handler threads end after 1 s (Hive's default: 60 s), and
    finished operations left open are closed after 3 s idle (Hive's: 5 days)."""
    conf = load_settings(
        {
            "home": str(tmp_path),
            "thrift_port": free_port(),
            "metastore_port": free_port(),
            "thrift_handler_idle_seconds": 1,
            "thrift_idle_operation_seconds": 3,
        }
    )
    stack.up(conf, log=lambda _: None)
    yield conf
    stack.down(conf, log=lambda _: None)


def select_one(conf: Settings, seconds: float = ANSWER_SECONDS) -> list[tuple]:
    """`select 1` on a new session, a socket deadline on every read."""
    import thrift.transport.TSocket
    import thrift_sasl
    from pyhive import hive
    from pyhive.hive import get_installed_sasl

    socket = thrift.transport.TSocket.TSocket(conf.thrift_host, conf.thrift_port)
    socket.setTimeout(seconds * 1000)
    transport = thrift_sasl.TSaslClientTransport(
        lambda: get_installed_sasl(
            host=conf.thrift_host, sasl_auth="PLAIN", username="lakehouse", password="x"
        ),
        "PLAIN",
        socket,
    )
    connection = hive.connect(thrift_transport=transport)
    try:
        cursor = connection.cursor()
        cursor.execute("show databases")
        cursor.fetchall()
        cursor.execute("select 1")
        return cursor.fetchall()
    finally:
        connection.close()


def handler_threads(pid: int) -> set[int]:
    """The ids of the server's live Thrift handler threads (one per open connection)."""
    dump = subprocess.run(
        ["jcmd", str(pid), "Thread.print"], capture_output=True, text=True, check=True
    ).stdout
    return {int(thread_id) for thread_id in HANDLER_THREAD.findall(dump)}


def operation_open(connection, handle) -> bool:
    """Whether the server still holds the operation (a closed one's handle is invalid)."""
    from TCLIService import ttypes

    request = ttypes.TGetOperationStatusReq(handle)
    status = connection.client.GetOperationStatus(request).status
    if status.statusCode == ttypes.TStatusCode.ERROR_STATUS:
        assert "Invalid OperationHandle" in status.errorMessage, status.errorMessage
        return False
    return True


def register_tables(conf: Settings, database: str) -> subprocess.Popen:
    """A second process registering tables in the same catalog, as an ingest of another
    bronze database does."""
    code = textwrap.dedent(
        f"""
        from ingestion.settings import load_settings
        from ingestion.spark import build_session

        conf = load_settings({{"home": {str(conf.home)!r}, "thrift_port": {conf.thrift_port},
                               "metastore_port": {conf.metastore_port}}})
        spark = build_session("second-client", conf)
        spark.sql("create database if not exists {database}")
        for i in range(3):
            spark.sql(f"create table if not exists {database}.t{{i}} (id int) using parquet")
            spark.sql(f"insert into {database}.t{{i}} values (1)")
        spark.stop()
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def test_session_churn_a_second_client_and_abandoned_statements_leave_it_serving(
    own_stack,
) -> None:
    """Waves of new sessions (a dashboard's session per query) while another process
    registers tables: the handler threads, and so their metastore stores, are reused
    (before: 5 kept, the rest died after their idle time and were made anew, each
    thread's store left for a finalizer), and a new session answers at once. A
    statement its client leaves open on a session that stays is closed by the server
    after its idle time (before: Hive's default of 5 days, as Spark overwrote the
    setting; docs/decisions/0016-thrift-operations-closed.md)."""
    conf = own_stack
    pid = stack.thrift_pid(conf)
    assert pid is not None
    assert select_one(conf) == [(1,)]  # warm: the server's first metastore store is made
    session = thrift_client.Connection(conf, timeout=ANSWER_SECONDS)
    idle = session._connection  # PyHive's, to leave a statement open as a careless client does
    abandoned = idle.cursor()
    abandoned.execute("select 1")
    assert abandoned.fetchall() == [(1,)] and operation_open(idle, abandoned._operationHandle)
    writer = register_tables(conf, "second_bronze")
    seen: set[int] = set()
    try:
        with ThreadPoolExecutor(WAVE_WIDTH) as pool:
            for _ in range(WAVES):
                answers = list(pool.map(lambda _: select_one(conf), range(WAVE_WIDTH)))
                assert answers == [[(1,)]] * WAVE_WIDTH
                seen |= handler_threads(pid)
                # Idle for longer than the handler threads' idle time (1 s), so that the
                # threads past the kept ones end: until only Hive's 5 are left, or 3 s.
                deadline = time.monotonic() + 3
                while len(handler_threads(pid)) > 5 and time.monotonic() < deadline:
                    time.sleep(0.2)
        assert writer.wait(timeout=600) == 0, writer.stderr.read()[-3000:] if writer.stderr else ""
    finally:
        if writer.poll() is None:  # a failed wave must not leave the writer running
            writer.kill()
            writer.wait()
    assert select_one(conf) == [(1,)]
    assert stack.query("select count(*) from second_bronze.t2", conf) == [(1,)]
    assert len(seen) <= max(WAVE_WIDTH, conf.thrift_handler_threads), sorted(seen)
    deadline = time.monotonic() + ANSWER_SECONDS
    while operation_open(idle, abandoned._operationHandle):
        assert time.monotonic() < deadline, "an abandoned statement stayed open"
        time.sleep(0.5)
    session.close()


def test_status_names_a_wedged_server_and_up_replaces_it(own_stack) -> None:
    """A server that holds its port but answers nothing is wedged: status says so in
    one line and fails; `up` stops it by its pid and starts a new one."""
    conf = own_stack
    pid = stack.thrift_pid(conf)
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        status = run_cli(conf, "status")
        assert time.monotonic() - started < conf.thrift_health_timeout_seconds + 15
        assert status.returncode == 1, status.stdout
        assert (
            f"thrift: wedged (pid {pid}): no answer to select 1 in "
            f"{conf.thrift_health_timeout_seconds} s; run lakehouse stack up to replace it"
        ) in status.stdout.splitlines()
        up = run_cli(conf, "up")
        assert up.returncode == 0, up.stdout + up.stderr
    finally:
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGCONT)
    new_pid = stack.thrift_pid(conf)
    assert new_pid not in (None, pid)
    assert not os.path.exists(f"/proc/{pid}") or stack._is_zombie(pid)
    assert run_cli(conf, "status").returncode == 0


def run_cli(conf: Settings, action: str) -> subprocess.CompletedProcess:
    """`lakehouse stack ACTION` on the own stack's settings, as a user runs it."""
    env = {
        **os.environ,
        "LAKEHOUSE_HOME": str(conf.home),
        "LAKEHOUSE_THRIFT_PORT": str(conf.thrift_port),
        "LAKEHOUSE_METASTORE_PORT": str(conf.metastore_port),
        "LAKEHOUSE_THRIFT_HANDLER_IDLE_SECONDS": str(conf.thrift_handler_idle_seconds),
    }
    lakehouse = os.path.join(os.path.dirname(sys.executable), "lakehouse")
    return subprocess.run(
        [lakehouse, "stack", action], capture_output=True, text=True, env=env, timeout=600
    )
