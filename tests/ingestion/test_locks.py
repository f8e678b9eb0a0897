"""The per-table writer lock: a second writer waits, then refuses naming the holder."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ingestion.locks import TableLockedError, lock_path, table_lock

HOLD = """
import sys, time
from pathlib import Path
from ingestion.locks import table_lock
with table_lock(Path(sys.argv[1]), "db", "sales", 5):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _holder(home: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "held"
    return process


def test_another_process_holding_the_table_is_named_after_the_wait(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    try:
        started = time.monotonic()
        with pytest.raises(TableLockedError) as refused, table_lock(tmp_path, "db", "sales", 0.5):
            pass
        assert time.monotonic() - started >= 0.5
        assert f"db.sales is being written by a run, pid {holder.pid}" in str(refused.value)
        with table_lock(tmp_path, "db", "users", 0.5):  # other tables are free
            pass
    finally:
        holder.communicate("\n", timeout=10)
    with table_lock(tmp_path, "db", "sales", 0.5):  # released with the holder
        holder_text = lock_path(tmp_path, "db", "sales").read_text()
        assert holder_text.startswith(f"a run, pid {os.getpid()}")


def test_a_waiting_writer_gets_the_table_when_the_holder_is_done(tmp_path: Path) -> None:
    order: list[str] = []
    first_in = threading.Event()

    def first() -> None:
        with table_lock(tmp_path, "db", "sales", 5):
            first_in.set()
            time.sleep(0.3)  # the critical section, not a wait for the other thread
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(5)
    with table_lock(tmp_path, "db", "sales", 5):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    holder.kill()
    holder.wait(timeout=10)
    with table_lock(tmp_path, "db", "sales", 0.5):
        pass
