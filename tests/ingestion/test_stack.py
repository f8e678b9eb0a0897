"""The local stack: a separate PySpark job writes Hudi, the Thrift server reads it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from ingestion.settings import Settings, settings
from lakehouse import stack, thrift_client
from lakehouse.dbt_wrapper import run_dbt
from tests.guides import REPO, code_blocks, command

# The bronze database of the settings (tests/conftest.py sets a non-default one).
DATABASE = settings().bronze_database
WRITER = textwrap.dedent(
    f"""
    from ingestion.spark import build_session

    spark = build_session("stack-test-writer")
    spark.sql("create database if not exists {DATABASE}")
    spark.sql('''
        create table if not exists {DATABASE}.stack_smoke (
            id int, name string, position bigint
        ) using hudi
        tblproperties (type = 'cow', primaryKey = 'id', preCombineField = 'position')
    ''')
    spark.sql("insert into {DATABASE}.stack_smoke values (1, 'a', 1), (2, 'b', 1), (3, 'c', 1)")
    spark.sql('''
        merge into {DATABASE}.stack_smoke t
        using (select 2 as id, 'b2' as name, 2L as position
               union all select 4, 'd', 1) s
        on t.id = s.id
        when matched then update set *
        when not matched then insert *
    ''')
    spark.sql("delete from {DATABASE}.stack_smoke where id = 3")
    spark.stop()
    """
)


def run_writer(code: str) -> None:
    """Run Spark code in a separate process, as an ingestion job would."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-4000:]


def test_thrift_server_reads_hudi_table_written_by_another_process(local_stack: None) -> None:
    run_writer(WRITER)
    rows = stack.query(f"select id, name, position from {DATABASE}.stack_smoke order by id")
    assert rows == [(1, "a", 1), (2, "b2", 2), (4, "d", 1)]


def test_thrift_server_sees_a_new_commit_without_refresh(local_stack: None) -> None:
    before = stack.query(f"select count(*) from {DATABASE}.stack_smoke")[0][0]
    run_writer(
        "from ingestion.spark import build_session\n"
        "spark = build_session('stack-test-append')\n"
        f"spark.sql(\"insert into {DATABASE}.stack_smoke values (5, 'e', 1)\")\n"
    )
    after = stack.query(f"select count(*) from {DATABASE}.stack_smoke")[0][0]
    assert after == before + 1


def test_a_connection_keeps_one_server_session_for_its_statements(local_stack: None) -> None:
    with thrift_client.Connection() as connection:
        connection.execute("create temporary view session_probe as select 7 as x")
        assert connection.execute("select x from session_probe").rows == [(7,)]
    # A temporary view lives in its session: a connection of its own has none.
    with pytest.raises(thrift_client.QueryFailed, match="session_probe"):
        thrift_client.execute("select x from session_probe")


def test_a_long_lived_connection_leaves_no_statement_open_on_the_server(
    local_stack: None, monkeypatch
) -> None:
    """The server holds a statement's result and plan until it is closed: the prober's
    connection held every one for hours (docs/decisions/0016-thrift-operations-closed.md)."""
    from pyhive import hive
    from TCLIService import ttypes

    handles = []
    execute = hive.Cursor.execute

    def recording(cursor, *args, **kwargs):
        execute(cursor, *args, **kwargs)
        handles.append(cursor._operationHandle)

    with thrift_client.Connection() as connection:
        monkeypatch.setattr(hive.Cursor, "execute", recording)  # after the session's own USE
        for n in range(5):
            assert connection.execute(f"select {n}").rows == [(n,)]
        with pytest.raises(thrift_client.QueryFailed):
            connection.execute("select * from no_such_table")  # refused: no operation
        assert connection.execute("select 5").rows == [(5,)]
        client = connection._connection.client
        statuses = [
            client.GetOperationStatus(ttypes.TGetOperationStatusReq(handle)).status
            for handle in handles
        ]
    # Closed on the server: it no longer knows the handle (open, it says FINISHED).
    assert len(statuses) == 6
    error = ttypes.TStatusCode.ERROR_STATUS
    assert all(
        s.statusCode == error and "Invalid OperationHandle" in s.errorMessage for s in statuses
    ), [(s.statusCode, s.errorMessage) for s in statuses]


def test_dbt_debug_connects_to_the_local_target(local_stack: None) -> None:
    result = run_dbt(["debug", "--target", "local"])
    assert result.returncode == 0


def test_up_twice_starts_one_server(local_stack: None) -> None:
    conf = settings()
    pids = {s.name: stack.running_pid(s, conf) for s in stack.services(conf)}
    stack.up(log=lambda _: None)
    assert {s.name: stack.running_pid(s, conf) for s in stack.services(conf)} == pids
    thrift_servers = subprocess.run(
        ["pgrep", "-f", f"hive.server2.thrift.port={conf.thrift_port}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert len(thrift_servers) == 1


def test_the_thrift_server_logs_to_a_bounded_rolling_file(local_stack: None) -> None:
    """Its log4j writes thrift.log (rolling at a size, conf/log4j2-server.properties); what
    the process prints goes to thrift.out, which holds no log line."""
    conf = settings()
    service = stack.thrift_service(conf)
    pid = stack.thrift_pid(conf)
    assert pid is not None
    properties = subprocess.run(
        ["jcmd", str(pid), "VM.system_properties"], capture_output=True, text=True, check=True
    ).stdout
    assert f"log4j2.configurationFile={stack.SERVER_LOG_CONFIG}" in properties
    assert f"lakehouse.log.file={service.log_file(conf)}" in properties
    assert "INFO HiveThriftServer2: HiveThriftServer2 started" in service.log_file(conf).read_text()
    printed = service.output_file(conf).read_text()
    assert " INFO " not in printed and " WARN " not in printed, printed[-2000:]


def collections(pid: int) -> dict[str, int]:
    """A JVM's full and concurrent GC counts so far (jstat's FGC and CGC)."""
    names, values = subprocess.run(
        ["jstat", "-gcutil", str(pid)], capture_output=True, text=True, check=True
    ).stdout.split("\n")[:2]
    counts = dict(zip(names.split(), values.split(), strict=True))
    return {"full": int(counts["FGC"]), "concurrent": int(counts["CGC"])}


def test_a_system_gc_does_not_stop_the_thrift_server(local_stack: None) -> None:
    """The metastore client's System.gc() calls (CONCURRENT_EXPLICIT_GC) start a
    concurrent cycle: no stop-the-world full collection."""
    pid = stack.thrift_pid(settings())
    assert pid is not None
    before = collections(pid)
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, check=True)
    deadline = time.monotonic() + 30
    while collections(pid)["concurrent"] == before["concurrent"]:
        assert time.monotonic() < deadline, "no concurrent cycle followed System.gc()"
    assert collections(pid)["full"] == before["full"]


# Hive's metastore logs this each time a thread opens its store.
STORE_OPENED = "Opening raw store with implementation class"
# What makes a thread open its store again, as Hive logs it: a client made anew
# for a changed metastore setting, a retried call, a store cleaned up.
REOPENED = re.compile(r"Mestastore configuration|Retrying HMSHandler|Cleaning up thread local")


def run_async(conf: Settings, sql: str) -> list[tuple]:
    """One statement as dbt-spark runs it: a new connection, run in the background, polled."""
    from pyhive import hive
    from TCLIService.ttypes import TOperationState

    connection = hive.connect(host=conf.thrift_host, port=conf.thrift_port, username="lakehouse")
    try:
        cursor = connection.cursor()
        cursor.execute(sql, async_=True)
        pending = (TOperationState.INITIALIZED_STATE, TOperationState.RUNNING_STATE)
        deadline = time.monotonic() + 120
        while cursor.poll().operationState in pending:  # the server holds each poll up to 5 s
            assert time.monotonic() < deadline, f"still running after 120 s: {sql}"
        return cursor.fetchall()
    finally:
        connection.close()


def statement_threads(pid: int) -> set[str]:
    """The names of the Thrift server's live background statement threads."""
    dump = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True)
    return set(re.findall(r'^"(HiveServer2-Background-Pool: [^"]+)"', dump.stdout, re.M))


def test_concurrent_statements_keep_their_threads_and_metastore_stores(other_stack) -> None:
    """dbt's two threads at once: statements reuse a few pool threads, and each opens
    its session's metastore store (the old defaults: a new thread per statement,
    and about 10 stores per statement from impersonating the session's user).
    On a server of its own: what other tests ran before on the shared one does
    not count."""
    conf = other_stack
    stack.up(conf, log=lambda _: None)
    pid = stack.thrift_pid(conf)
    assert pid is not None
    table = f"{DATABASE}.stack_threads"
    stack.query(f"create database if not exists {DATABASE}", conf)
    stack.query(f"create table if not exists {table} (id int) using parquet", conf)
    log = stack.thrift_service(conf).log_file(conf)
    before = log.read_text()
    statements = 4 * stack.STATEMENT_THREADS
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(
            pool.map(lambda _: run_async(conf, f"select count(*) from {table}"), range(statements))
        )
    assert answers == [[(0,)]] * statements
    assert 0 < len(statement_threads(pid)) <= stack.STATEMENT_THREADS
    # one per session, and one per pool thread the first time it runs a statement
    during = log.read_text().removeprefix(before)
    why = Counter(REOPENED.findall(during))
    assert during.count(STORE_OPENED) <= statements + stack.STATEMENT_THREADS, why


@pytest.fixture
def other_stack(tmp_path, free_port):
    """A second, short-lived stack on its own ports and home."""
    from ingestion.settings import load_settings

    conf = load_settings(
        {
            "home": str(tmp_path),
            "thrift_port": free_port(),
            "metastore_port": free_port(),
        }
    )
    yield conf
    stack.down(conf, log=lambda _: None)


def test_the_guide_s_stack_commands_run_as_written_and_status_fails_after_down(
    other_stack,
) -> None:
    """docs/getting-started.md's local-stack block, line by line, on the second stack."""
    conf = other_stack
    env = {
        **os.environ,
        "LAKEHOUSE_HOME": str(conf.home),
        "LAKEHOUSE_THRIFT_PORT": str(conf.thrift_port),
        "LAKEHOUSE_METASTORE_PORT": str(conf.metastore_port),
    }
    (block,) = [b for b in code_blocks(REPO / "docs" / "getting-started.md", "bash")
                if b.section == "The local stack"]  # fmt: skip
    ran = {}
    for line in block.lines:
        done = subprocess.run(
            ["bash", "-e", "-c", line], cwd=REPO, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        ran[command(line)] = done.stdout
    assert list(ran) == [f".venv/bin/lakehouse stack {a}" for a in ("up", "status", "logs", "down")]
    assert f"thrift: healthy on 127.0.0.1:{conf.thrift_port}" in ran[".venv/bin/lakehouse stack up"]
    up = rf"^thrift: up \(pid \d+\) on 127\.0\.0\.1:{conf.thrift_port}$"
    assert re.search(up, ran[".venv/bin/lakehouse stack status"], re.MULTILINE)
    tails = [line for line in ran[".venv/bin/lakehouse stack logs"].splitlines() if "==> " in line]
    assert len(tails) >= 2 and all(str(conf.home) in line for line in tails)
    assert all(stack.running_pid(s, conf) is None for s in stack.services(conf))
    lines: list[str] = []
    assert not stack.status(conf, log=lines.append)
    assert lines == ["catalog: down", "thrift: down"]


def test_port_in_use_gives_a_clear_error(other_stack) -> None:
    import socket

    conf = other_stack
    with socket.socket() as squatter:
        squatter.bind((conf.thrift_host, conf.metastore_port))
        squatter.listen()
        with pytest.raises(stack.StackError, match=f"port {conf.metastore_port} .* in use"):
            stack.up(conf, log=lambda _: None)


def test_a_restart_waits_for_a_closing_connection_but_not_for_a_listener(free_port) -> None:
    """A port held by a socket that is only closing (a browser's connection to a stopped
    docs site) is waited for; a port something listens on is refused at once."""
    import socket
    import threading

    port = free_port()
    closing = socket.socket()  # bound without SO_REUSEADDR, as `dbt docs serve` binds
    closing.bind((stack.LOOPBACK, port))
    assert stack.port_in_use(stack.LOOPBACK, port)
    threading.Timer(1.0, closing.close).start()
    assert stack.port_released(stack.LOOPBACK, port)
    with socket.socket() as listener:
        listener.bind((stack.LOOPBACK, port))
        listener.listen()
        started = time.monotonic()
        assert not stack.port_released(stack.LOOPBACK, port)
        assert time.monotonic() - started < 5
