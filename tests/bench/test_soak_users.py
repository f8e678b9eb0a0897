"""The soak's background parts on the test stack: the monitor, the new-session client, the jobs.

The whole `bench soak` takes minutes even when tiny (a dbt build and a second
ingest run to their end); its streaming half is `bench latency`'s, tested in
test_latency.py. Here each part runs against the real Thrift server.
"""

from __future__ import annotations

import dataclasses
import json
import time

from ingestion.settings import settings
from lakehouse import stack, thrift_client
from lakehouse.bench.soak_users import Jobs, Monitor, SessionClient, java_pids


def wait_for(condition, seconds: float = 60) -> None:
    ends = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < ends, "not within the deadline"
        time.sleep(0.2)


def test_the_monitor_reads_the_servers_memory_and_each_new_batch(local_stack, tmp_path) -> None:
    thrift = stack.thrift_pid(settings())
    assert java_pids(thrift) == [thrift]  # the server is its JVM
    health = tmp_path / "health.json"
    health.write_text(json.dumps({"batches": 4, "events": 1000, "last_batch_seconds": 3.0}))
    started = time.monotonic() - 59.0  # one second before the second minute begins
    with Monitor({"thrift": thrift}, health, started) as monitor:
        wait_for(lambda: monitor.minutes)
        health.write_text(json.dumps({"batches": 5, "events": 1250, "last_batch_seconds": 7.5}))
        wait_for(lambda: monitor.batches)
    [minute] = monitor.minutes[:1]
    assert minute.minute == 0
    assert minute.rss["thrift"] > 200 * 1024**2  # a Spark driver's JVM
    assert 0 < minute.old_after_gc["thrift"] <= minute.heap_after_gc["thrift"]
    assert minute.heap_max["thrift"] >= 1024**3  # thrift_driver_memory
    [(at, seconds, events)] = monitor.batches
    assert (seconds, events) == (7.5, 250) and at >= 59
    monitor.histogram("late")  # the server's live classes, as a soak's end takes them
    late = monitor.histograms["late"]
    assert len(late) == 40 and any(name == "[B" and size > 1024**2 for name, _, size in late)


def test_the_client_opens_a_new_session_per_query_and_times_select_1(
    local_stack, monkeypatch
) -> None:
    opened: list[thrift_client.Connection] = []

    class Counted(thrift_client.Connection):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(thrift_client, "Connection", Counted)
    with SessionClient(settings(), 0.5, "select count(*) from range(10)", time.monotonic()) as c:
        wait_for(lambda: len(c.sessions) >= 3)
    answered = [seconds for _, seconds in c.sessions]
    assert all(seconds is not None and 0 < seconds < 30 for seconds in answered)
    assert len(opened) == len(c.sessions)  # a new session for each, as a dashboard's queries


def test_a_session_the_server_does_not_answer_is_recorded_unanswered(free_port) -> None:
    nobody = dataclasses.replace(settings(), thrift_port=free_port())
    with SessionClient(nobody, 0.2, "select 1", time.monotonic()) as client:
        wait_for(lambda: len(client.sessions) >= 2, 30)
    assert [seconds for _, seconds in client.sessions[:2]] == [None, None]


def test_jobs_take_turns_and_each_is_recorded_with_its_outcome() -> None:
    ran: list[str] = []

    def job(name: str, code: int):
        return lambda: ran.append(name) or {"returncode": code}

    with Jobs(
        [("dbt build", job("dbt", 0)), ("second ingest", job("ingest", 3))], 0.05, time.monotonic()
    ) as jobs:
        wait_for(lambda: len(jobs.records) >= 3, 10)
    assert ran[:3] == ["dbt", "ingest", "dbt"]
    kinds = [(r["kind"], r["returncode"]) for r in jobs.records[:3]]
    assert kinds == [("dbt build", 0), ("second ingest", 3), ("dbt build", 0)]
    assert all(r["seconds"] >= 0 and r["started"] >= 0 for r in jobs.records)
