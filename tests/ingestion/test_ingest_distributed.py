"""The same ingestion on S3 (a local S3-compatible server) and on a Spark standalone cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingestion.hudi_timeline import META_FOLDER
from ingestion.settings import load_settings
from ingestion.spark import spark_env
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.stack import spark_home
from tests.conftest import free_port, wait_until_healthy
from tests.platform.sockets import listeners

from .bronze import differences, expected, make_landing, run_ingest, spark_rows, tables_for


def test_ingest_with_landing_and_lake_on_s3(spark, s3_env, tmp_path: Path) -> None:
    s3_env.create_bucket(Bucket="tickit")
    options = {"scale": 0.01, "change_batches": 2}
    generate(GenerateOptions(out="s3://tickit/landing", **options))
    local = make_landing(tmp_path / "expected", **options)  # same seed: same expected state
    conf = load_settings({"landing": "s3://tickit/landing", "lake": "s3://tickit/lake"})
    results = run_ingest(spark, conf, tables_for("s3_bronze", ("sales", "users")))
    assert results["sales"].committed and results["users"].committed
    for table, key in (("sales", "salesid"), ("users", "userid")):
        rows = spark_rows(spark, conf, "s3_bronze", table)
        assert differences(rows, expected(local, table), key) == [], table
    listed = s3_env.list_objects_v2(Bucket="tickit", Prefix=f"lake/s3_bronze/sales/{META_FOLDER}/")
    assert listed["KeyCount"] > 0
    assert not run_ingest(spark, conf, tables_for("s3_bronze", ("sales",)))["sales"].committed


def _spark_daemon(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(spark_home() / "bin" / "spark-class"), *args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        # Their web UIs bind SPARK_LOCAL_IP, like every Spark JVM of the project.
        env={**os.environ, "SPARK_HOME": str(spark_home()), **spark_env()},
        start_new_session=True,
    )


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A Spark master and one worker on loopback; stopped by their pids."""
    port, ui = free_port(), free_port()
    master = _spark_daemon(
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)],
        tmp_path / "master.log",
    )  # fmt: skip
    url = f"spark://127.0.0.1:{port}"
    worker = _spark_daemon(
        ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
         "--cores", "2", "--memory", "3g", "--webui-port", str(free_port()),
         "--work-dir", str(tmp_path / "work")],
        tmp_path / "worker.log",
    )  # fmt: skip
    try:
        wait_until_healthy(master, f"http://127.0.0.1:{ui}/json/", "spark master")
        _wait_for_worker(master, ui)
        yield url, ui
        exposed = [found for found in listeners([master.pid, worker.pid]) if not found.loopback]
        assert exposed == []
    finally:
        for process in (worker, master):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def _master_state(ui: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as response:
        return json.load(response)


def _wait_for_worker(master: subprocess.Popen, ui: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(w["state"] == "ALIVE" for w in _master_state(ui).get("workers", [])):
            return
        assert master.poll() is None
        time.sleep(0.2)
    raise AssertionError("no worker registered with the master")


def test_ingest_on_a_standalone_cluster_gives_the_same_state(
    spark, standalone_cluster: tuple[str, int], tmp_path: Path
) -> None:
    master_url, ui = standalone_cluster
    landing = make_landing(tmp_path / "landing", change_batches=2, format="avro")
    lake = tmp_path / "lake"
    env = {
        **os.environ,
        "LAKEHOUSE_SPARK_MASTER": master_url,
        "LAKEHOUSE_EXECUTOR_MEMORY": "1g",
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": str(lake),
        "LAKEHOUSE_BRONZE_DATABASE": "cluster_bronze",
    }
    result = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "ingest", "--tables", "sales,users"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    apps = _master_state(ui)["completedapps"]
    assert [app["name"] for app in apps] == ["lakehouse-ingest"]  # it ran on the cluster
    conf = load_settings({"landing": str(landing), "lake": str(lake)})
    for table, key in (("sales", "salesid"), ("users", "userid")):
        rows = spark_rows(spark, conf, "cluster_bronze", table)
        assert differences(rows, expected(landing, table), key) == [], table
