"""Checks a run makes before it starts Spark, so a broken setup costs one line, not a trace.

Each check names the cause and the fix. They run before any Spark or Hudi
work, so a failed check leaves the lake exactly as it was. Remote stores
(s3://) are checked by the run itself, through Hadoop's file system.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

from ingestion.errors import UserError
from ingestion.settings import Settings

CONNECT_SECONDS = 3


class PreflightError(UserError):
    """Something a run needs is missing or unusable; the message says what to do."""


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
            return True
    except OSError:
        return False


def check_catalog(conf: Settings) -> None:
    """The Hive metastore (or the local catalog's database) answers on its port."""
    if conf.local_metastore:
        host, port = conf.thrift_host, conf.metastore_port
        fix = "start it with `lakehouse stack up` (port: LAKEHOUSE_METASTORE_PORT)"
    else:
        parsed = urlparse(conf.metastore_uri)
        host, port = parsed.hostname or "", parsed.port or 9083
        fix = "check metastore_uri (LAKEHOUSE_METASTORE_URI) and that the metastore is up"
    if not _reachable(host, port):
        raise PreflightError(f"the catalog at {host}:{port} is not reachable: {fix}")


def check_landing(landing: str) -> None:
    """A local landing zone exists and can be listed."""
    if "://" in landing:
        return
    path = Path(landing)
    if not path.is_dir():
        raise PreflightError(
            f"the landing zone {landing} does not exist: generate CDC into it "
            "(`lakehouse cdc generate --out ...`) or point --landing / LAKEHOUSE_LANDING at it"
        )
    if not os.access(path, os.R_OK | os.X_OK):
        raise PreflightError(
            f"the landing zone {landing} is not readable by this user: fix its permissions"
        )


def check_lake(lake: str) -> None:
    """A local lake folder is writable (or can be created)."""
    if "://" in lake:
        return
    path = Path(lake)
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise PreflightError(
            f"the lake {lake} cannot be created: {existing} is a file, not a folder; "
            "point --lake / LAKEHOUSE_LAKE at a folder"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PreflightError(
            f"the lake {lake} is not writable ({existing} is read-only for this user): "
            "fix its permissions or point --lake / LAKEHOUSE_LAKE elsewhere"
        )


def check_run(conf: Settings) -> None:
    """Everything `lakehouse ingest` needs before it starts Spark."""
    check_landing(conf.landing)
    check_lake(conf.lake)
    check_catalog(conf)
