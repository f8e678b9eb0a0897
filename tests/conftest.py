"""Shared fixtures: one isolated settings home, one Spark session, one stack per run.

The test run never touches the developer's stack: it gets its own home folder
and free ports, set in the environment before any project module reads them.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported in the fixtures: after the settings' environment is set
    from lakehouse.scheduler.records import JobRecord
    from tests.make_run import MakeRun

REPO = Path(__file__).resolve().parents[1]


_GIVEN_PORTS: set[int] = set()


def _ephemeral_floor() -> int:
    """The lowest port the kernel hands out on its own (outgoing connections, bind to 0)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _worker() -> tuple[int, int]:
    """This process's index among the run's pytest-xdist workers, and their count."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name.removeprefix("gw")), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def free_port() -> int:
    """A loopback port free now, below the kernel's ephemeral range, never given twice.

    Ports are chosen at the start of the run for servers started much later
    (the docs site 40 minutes in): a port from the ephemeral range could be
    taken meanwhile by any outgoing connection or random-port listener, and
    the server would fail with "Address already in use". Below the range,
    only a program asking for that very port can take it. Each xdist worker
    draws from its own residue class, so two workers never pick the same port.
    """
    floor = _ephemeral_floor()
    index, count = _worker()
    candidates = [p for p in range(max(1024, floor - 12000), floor) if p % count == index]
    random.shuffle(candidates)
    for port in candidates:
        if port in _GIVEN_PORTS:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _GIVEN_PORTS.add(port)
        return port
    raise RuntimeError(f"no free loopback port below {floor}")


_HOME = Path(tempfile.mkdtemp(prefix="lakehouse-test-"))
SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIALAKEHOUSETESTKEY7",
    "AWS_SECRET_ACCESS_KEY": "lakehouse/test/secret+Kq8vZ2mN4pR7sT1wX",
    "DBT_PROD_PASSWORD": "dbt-prod-password-3f9c1e",
}
os.environ.update(
    {
        "LAKEHOUSE_HOME": str(_HOME),
        "LAKEHOUSE_JARS": str(REPO / ".lakehouse" / "jars"),
        "LAKEHOUSE_LANDING": str(_HOME / "landing"),
        "LAKEHOUSE_LAKE": str(_HOME / "lake"),
        "LAKEHOUSE_THRIFT_PORT": str(free_port()),
        "LAKEHOUSE_METASTORE_PORT": str(free_port()),
        "LAKEHOUSE_DRIVER_MEMORY": "3g",
        # Jobs on test-sized data finish before C2's compilations pay back.
        "LAKEHOUSE_JOB_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1",
        "LAKEHOUSE_SHUFFLE_PARTITIONS": "2",
        "LAKEHOUSE_THRIFT_DRIVER_MEMORY": "3g",
        "LAKEHOUSE_DOCS_PORT": str(free_port()),
        "LAKEHOUSE_DBT_TARGET_PATH": str(_HOME / "target"),
        # The live CDC chain (tests/cdc/test_live_chain.py): its own ports and data.
        "LAKEHOUSE_CDC_JARS": str(REPO / ".lakehouse" / "cdc-jars"),
        "LAKEHOUSE_CDC_POSTGRES_PORT": str(free_port()),
        "LAKEHOUSE_CDC_MARIADB_PORT": str(free_port()),
        "LAKEHOUSE_CDC_KAFKA_PORT": str(free_port()),
        "LAKEHOUSE_CDC_KAFKA_CONTROLLER_PORT": str(free_port()),
        "LAKEHOUSE_CDC_CONNECT_PORT": str(free_port()),
        "LAKEHOUSE_CDC_REGISTRY_PORT": str(free_port()),
        # ems's connector writes Avro through Apicurio Registry, ecomm's JSON: both
        # formats on the one chain.
        "LAKEHOUSE_SOURCE_KAFKA_FORMATS": os.environ.get(
            "LAKEHOUSE_SOURCE_KAFKA_FORMATS", '{"ems": "avro"}'
        ),
        # Not the defaults of conf/lakehouse.yml: ingestion, dbt (sources, schemas,
        # docs) and the dashboard of the whole run must take the names from the
        # settings alone (tests/dashboard checks no default name shows up).
        "LAKEHOUSE_BRONZE_DATABASE": "it_bronze",
        "LAKEHOUSE_DBT_SCHEMA": "it",
        "LAKEHOUSE_MARTS_SCHEMA": "it_reporting",
        # The S3 tests' local server (started on demand by `s3_endpoint`); set
        # before any JVM starts, as a deployment would, so s3a sees it too.
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        # Distinctive values, so the secrets test can tell that no output holds them.
        "AWS_ACCESS_KEY_ID": SECRETS["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": SECRETS["AWS_SECRET_ACCESS_KEY"],
        "DBT_PROD_PASSWORD": SECRETS["DBT_PROD_PASSWORD"],
        "AWS_DEFAULT_REGION": "us-east-1",
    }
)


def written_files(*folders: Path) -> list[Path]:
    """Every file under the folders that exist."""
    return [path for folder in folders if folder.exists() for path in folder.rglob("*")
            if path.is_file()]  # fmt: skip


def leaked_secrets(files: list[Path]) -> list[tuple[str, str]]:
    """(file, secret's name) for every file that holds a secret's value."""
    return [
        (str(path), name)
        for path in files
        for name, secret in SECRETS.items()
        if secret.encode() in path.read_bytes()
    ]


# Where `make test` (pytest-xdist, two workers) keeps tests together: a module's
# tests on one worker, so its module fixtures are built once, and the modules
# that share a costly session fixture in one group, so one worker builds it.
SHARED_GROUPS = {
    "daily_job": (
        "tests/test_make_run.py",
        "tests/airflow/test_dag_run.py",
        "tests/dashboard/test_dashboard.py",
        "tests/dbt/test_marts.py",
        "tests/docs/test_docs_site.py",
        "tests/docs/test_modeling_recipes.py",
        "tests/platform/test_loopback.py",
        "tests/platform/test_secrets.py",
        "tests/scheduler/test_jobs.py",
    ),
    "generated": ("tests/cdc/generate/",),
    "live_chain": (
        "tests/cdc/test_live_chain.py",
        "tests/cdc/test_own_tables.py",
        "tests/cdc/test_own_table_guide.py",
        "tests/cdc/test_resnapshot.py",
        "tests/cdc/test_whole_database.py",
    ),
}


def group_of(nodeid: str) -> str:
    """The group of a test: its module's, or the shared fixture's its module is listed under."""
    module = nodeid.split("::")[0]
    return next((f for f, modules in SHARED_GROUPS.items() if module.startswith(modules)), module)


# The longest groups first (seconds in one process on this machine, 2026-11-28), so
# that no worker starts a long one while the other is nearly done; then the rest.
LONGEST_FIRST = (
    "daily_job",  # 950 s: `make run`'s daily job, its DAG run, the marts, docs and dashboards
    "tests/bench/test_bench.py",  # 670 s
    "live_chain",  # 360 s: the live chain, TICKIT's tables and the own-types tables
    "tests/ingestion/test_ingest_crash.py",  # 210 s
    "tests/ingestion/test_ingest_formats.py",  # 200 s
    "tests/ingestion/test_ingest_faults.py",  # 170 s
    "tests/bench/test_latency.py",  # 150 s
)


def _interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def pytest_configure() -> None:
    """A run stopped by SIGTERM (a CI limit, `timeout`) unwinds as Ctrl-C does.

    Python's default for SIGTERM ends the process at once: the session
    fixtures' teardown never ran, and the run's stack (catalog and Thrift
    server) and servers outlived it. Each xdist worker loads this file too.
    """
    signal.signal(signal.SIGTERM, _interrupted)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest groups first; a module using a shared fixture must be in its group."""
    for item in items:
        for fixture in SHARED_GROUPS.keys() & set(item.fixturenames):
            if group_of(item.nodeid) != fixture:
                module = item.nodeid.split("::")[0]
                raise pytest.UsageError(
                    f"{module} uses {fixture}: list it in SHARED_GROUPS (tests/conftest.py)"
                )
    rank = {group: index for index, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(group_of(item.nodeid), len(rank)))  # stable


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist hands out whole groups (`group_of`) to its workers, in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # not by the number of tests: by LONGEST_FIRST

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


@pytest.fixture(scope="session", autouse=True)
def no_secret_written() -> Iterator[None]:
    """Nothing this process's tests wrote holds a secret, checked once they all ran.

    tests/platform/test_secrets.py checks the daily job's outputs when it runs;
    this covers what ran after it, or on another xdist worker, with its own home.
    """
    yield
    from ingestion.settings import settings

    conf = settings()
    assert leaked_secrets(written_files(conf.home, conf.dbt_target_path)) == []


@pytest.fixture(name="free_port")
def free_port_fixture():
    """A function that returns a free loopback port."""
    return free_port


@pytest.fixture(scope="session")
def home() -> Path:
    return _HOME


@pytest.fixture(scope="session")
def local_stack() -> Iterator[None]:
    """The local stack (catalog + Thrift server), started once and stopped at the end."""
    from ingestion.settings import settings
    from lakehouse import stack

    stack.up(log=lambda _: None)
    yield
    stack.down(log=lambda _: None)
    for service in stack.services(settings()):
        assert stack.running_pid(service, settings()) is None


@pytest.fixture(scope="session")
def spark(local_stack: None):
    """The one Spark session of the test run, on the test stack's catalog."""
    from ingestion.spark import build_session

    session = build_session("lakehouse-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def make_run(local_stack: None) -> Iterator[MakeRun]:
    """`make run` as the getting-started page writes it, on this run's stack, once per run.

    TICKIT CDC at scale 0.01 with one change batch through the `daily` job: the
    marts, the docs and the run record of later tests are its output on the
    session stack, as a scheduler would leave them. Its stop line's `stack
    down` runs when the session ends (tests/make_run.py).
    """
    from tests.make_run import run_make_run, stack_down

    run = run_make_run({"DOCS": free_port(), "DASHBOARD": free_port()})
    yield run
    stack_down(run)


@pytest.fixture(scope="session")
def daily_job(make_run: MakeRun) -> JobRecord:
    """The run record of `make run`'s daily job, typed."""
    return make_run.record


SCREENSHOTS = REPO / ".lakehouse" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # This machine's network is closed: without these Chromium keeps dialling out.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


MOTO_SERVER = Path(sys.executable).parent / "moto_server"
SERVER_START_SECONDS = 60


def wait_until_healthy(server: subprocess.Popen, url: str, what: str) -> None:
    """Poll a health URL until it answers 200; fail at once if the server exits."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:  # refused, reset or timed out: not up yet
            pass
        try:
            server.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"{what} exited with {server.returncode}")
    raise RuntimeError(f"{what} not healthy within {SERVER_START_SECONDS} s")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on the loopback port of AWS_ENDPOINT_URL, stopped by its pid."""
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    port = int(endpoint.rsplit(":", 1)[1])
    server = subprocess.Popen(
        [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_healthy(server, f"{endpoint}/moto-api/", "moto_server")
        yield endpoint
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=15)


@pytest.fixture
def s3_env(s3_endpoint: str):
    """A boto3 client of the local S3 server (the AWS variables point at it)."""
    import boto3

    return boto3.client("s3", endpoint_url=s3_endpoint)
