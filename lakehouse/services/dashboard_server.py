"""The dashboard server: the Streamlit app in `dashboard/`, started and stopped like the stack.

`up` starts Streamlit on 127.0.0.1 (the port is the `dashboard_port` setting)
and waits for its health endpoint; `down` stops exactly that process, found by
its pid file in the home's run folder. The app reads the marts through the
Thrift server of the same settings, so start the stack (and build the marts)
first.
"""

from __future__ import annotations

import sys
import urllib.request
from collections.abc import Callable

from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse import stack

APP = PROJECT_DIR / "dashboard" / "app.py"
HOST = stack.LOOPBACK


def url(conf: Settings, page: str = "") -> str:
    """The dashboard's address, or one page's."""
    return f"http://{HOST}:{conf.dashboard_port}/{page}"


def _health(conf: Settings) -> None:
    """Streamlit's own health endpoint answers `ok` once the server accepts sessions."""
    with urllib.request.urlopen(url(conf, "_stcore/health"), timeout=2) as response:
        body = response.read().decode()
    if response.status != 200 or body.strip() != "ok":
        raise stack.StackError(f"health endpoint answered {response.status} {body!r}")


def _command(conf: Settings) -> list[str]:
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address",
        HOST,
        "--server.port",
        str(conf.dashboard_port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        # No file watcher: the CPU is shared and a served dashboard is not edited live.
        "--server.fileWatcherType",
        "none",
        # A served dashboard, not a development session: no "Deploy" button or dev menu.
        "--client.toolbarMode",
        "viewer",
    ]


def service(conf: Settings) -> stack.Service:
    """Streamlit as one more loopback service of the stack (pid file, log, health check)."""
    return stack.Service(
        name="dashboard",
        marker=str(APP),
        port=conf.dashboard_port,
        command=_command(conf),
        health=lambda: _health(conf),
        port_setting="LAKEHOUSE_DASHBOARD_PORT",
        # The app imports `dashboard.*` from the repository root, and reads the marts of
        # these settings (their schema on their Thrift server) and the Pipeline page their
        # lake, landing, bronze database and run records; other LAKEHOUSE_* variables pass
        # through.
        env={
            "PYTHONPATH": str(PROJECT_DIR),
            "LAKEHOUSE_HOME": str(conf.home),
            "LAKEHOUSE_LANDING": str(conf.landing),
            "LAKEHOUSE_LAKE": str(conf.lake),
            "LAKEHOUSE_BRONZE_DATABASE": conf.bronze_database,
            "LAKEHOUSE_THRIFT_HOST": conf.thrift_host,
            "LAKEHOUSE_THRIFT_PORT": str(conf.thrift_port),
            "LAKEHOUSE_MARTS_SCHEMA": conf.marts_schema,
        },
    )


def up(conf: Settings | None = None, log: Callable[[str], None] = print) -> str:
    """Start the dashboard unless it runs, wait until it is healthy; return its URL."""
    conf = conf or settings()
    server = service(conf)
    stack.start_healthy(server, conf, log)
    log(
        f"dashboard: {url(conf)} (marts through the Thrift server on "
        f"{conf.thrift_host}:{conf.thrift_port}; stop it with `lakehouse dashboard down`)"
    )
    return url(conf)


def down(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    """Stop the dashboard `up` started, by its pid."""
    conf = conf or settings()
    stopped = stack.stop(service(conf), conf, timeout=20)
    log(f"dashboard: {'stopped' if stopped else 'not running'}")


def status(conf: Settings | None = None, log: Callable[[str], None] = print) -> bool:
    """Report whether the dashboard runs and answers its health check."""
    conf = conf or settings()
    server = service(conf)
    pid = stack.running_pid(server, conf)
    if pid is None:
        log("dashboard: down")
        return False
    try:
        server.health()
    except Exception as error:
        log(f"dashboard: running (pid {pid}) but unhealthy: {error}")
        return False
    log(f"dashboard: up (pid {pid}) at {url(conf)}")
    return True
