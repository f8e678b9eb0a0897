"""Storage failing in the middle of a commit: one line and exit 2, then an exact rerun.

S3: the endpoint of a `lakehouse ingest` whose lake is on S3 stops, or
answers every request with 503, while the bronze commit is in flight (the
proxy of s3_proxy.py stands between the run and the test's S3 server).
Disk full: the lake is a small tmpfs filled up before the run. Either way
the run ends with exit code 2 and one stderr line naming the cause and the
fix, no completed commit is added, and the next run, with the storage back,
ends in the generator's expected state with every change applied once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingestion.hudi_timeline import TIMELINE
from ingestion.settings import load_settings

from .bronze import differences, expected, make_landing, run_ingest, settings_for, spark_rows
from .bronze import tables_for as bronze_tables
from .s3_proxy import S3Proxy
from .test_ingest_crash import timeline

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
DEADLINE_SECONDS = 900
COMPLETED = re.compile(r"^\d+_\d+\.commit$")
# Fail after one attempt instead of s3a's default minutes of retries (a deployment's choice).
FAIL_FAST = {
    f"spark.hadoop.fs.s3a.{key}": value
    for key, value in {
        "attempts.maximum": "1", "retry.limit": "1", "retry.throttle.limit": "1",
        "retry.interval": "100ms", "retry.throttle.interval": "100ms",
        "connection.establish.timeout": "2000", "connection.timeout": "5000",
    }.items()
}  # fmt: skip


def _start_ingest(landing: Path, lake: str, database: str, **env: str) -> subprocess.Popen:
    environment = {
        **os.environ,
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": lake,
        "LAKEHOUSE_BRONZE_DATABASE": database,
        **env,
    }
    command = [LAKEHOUSE, "ingest", "--tables", "sales"]
    # Its own process group, so a failed wait can stop the driver and its JVM together.
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def _wait_for(process: subprocess.Popen, ready) -> None:
    """Poll until `ready()`; a run that ends first or never gets there fails the test."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while not ready():
            assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "fault point not reached in time"
            time.sleep(0.05)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise


def _one_line_error(process: subprocess.Popen, *wanted: str) -> None:
    out, err = process.communicate(timeout=DEADLINE_SECONDS)
    assert process.returncode == 2, (out[-2000:], err[-3000:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err[-3000:]
    assert lines[0].startswith("error: ")
    for text in wanted:
        assert text in lines[0], lines[0]
    assert "Traceback" not in out + err and "\tat " not in out + err


def _check_rerun(spark, conf, landing: Path, database: str) -> None:
    """A rerun commits and ends exact; the one after finds nothing new."""
    tables = bronze_tables(database, ("sales",))
    assert run_ingest(spark, conf, tables)["sales"].committed
    rows = spark_rows(spark, conf, database, "sales")
    assert differences(rows, expected(landing, "sales"), "salesid") == []
    changelog = spark_rows(spark, conf, database, "sales_changelog")
    assert len({r["_cdc_event_id"] for r in changelog}) == len(changelog)
    assert not run_ingest(spark, conf, tables)["sales"].committed


FAULTS = {"stopped": S3Proxy.stop, "answering 503": S3Proxy.fail}


@pytest.mark.parametrize("fault", FAULTS)
def test_s3_failing_mid_commit_is_one_line_then_the_rerun_is_exact(
    spark, s3_env, s3_endpoint: str, tmp_path: Path, free_port, fault: str
) -> None:
    index = list(FAULTS).index(fault)
    bucket, database = f"s3-faults-{index}", f"s3_faults_{index}"
    s3_env.create_bucket(Bucket=bucket)
    landing = make_landing(tmp_path / "landing", change_batches=2)
    proxy = S3Proxy(s3_endpoint, free_port())
    proxy.start()
    try:
        process = _start_ingest(
            landing, f"s3://{bucket}/lake", database,
            AWS_ENDPOINT_URL=proxy.url, LAKEHOUSE_SPARK_CONF=json.dumps(FAIL_FAST),
        )  # fmt: skip
        prefix = f"lake/{database}/sales/{TIMELINE}/"

        def timeline_keys() -> list[str]:
            listed = s3_env.list_objects_v2(Bucket=bucket, Prefix=prefix)
            return [item["Key"].rsplit("/", 1)[-1] for item in listed.get("Contents", [])]

        _wait_for(process, lambda: any(k.endswith(".inflight") for k in timeline_keys()))
        FAULTS[fault](proxy)
        _one_line_error(process, "S3 stopped answering", "AWS_ENDPOINT_URL", "rerun")
    finally:
        proxy.stop()
    assert not [key for key in timeline_keys() if COMPLETED.match(key)]
    conf = load_settings({"landing": str(landing), "lake": f"s3://{bucket}/lake"})
    _check_rerun(spark, conf, landing, database)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MB tmpfs, unmounted at the end; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)


def _fill(disk: Path) -> Path:
    """Write a file until the disk is full; return it."""
    filler = disk / "filler"
    chunk = b"\0" * (1 << 20)
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError:
            pass
        chunk = b"\0" * 512
        try:
            while True:
                out.write(chunk)
        except OSError:
            pass
    return filler


def _completed(conf, database: str) -> dict[str, list[str]]:
    return {
        table: sorted(p.name for p in timeline(conf, database, table).iterdir()
                      if COMPLETED.match(p.name))
        for table in ("sales", "sales_changelog")
    }  # fmt: skip


def test_disk_full_is_one_line_and_changes_no_commit(spark, small_disk: Path, tmp_path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=0)
    lake, database = small_disk / "lake", "disk_full"
    conf = settings_for(landing, lake)
    assert run_ingest(spark, conf, bronze_tables(database, ("sales",)))["sales"].committed
    before = _completed(conf, database)
    make_landing(landing, change_batches=2)  # two more batches to apply
    filler = _fill(small_disk)

    process = _start_ingest(landing, str(lake), database)
    _one_line_error(process, "disk is full", "No space left on device", "LAKEHOUSE_LAKE")
    assert _completed(conf, database) == before
    filler.unlink()
    _check_rerun(spark, conf, landing, database)
