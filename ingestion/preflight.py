"""Checks a run makes before it starts Spark, so a broken setup costs one line, not a trace.

Each check names the cause and the fix. They run before any Spark or Hudi
work, so a failed check leaves the lake exactly as it was. Remote stores
(s3://) are checked with a HEAD of their bucket, with the same credentials
and endpoint the run's s3a client takes from the environment.
"""

from __future__ import annotations

import errno
import os
import re
import socket
from dataclasses import dataclass
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


def _s3_problem(bucket: str, error: Exception) -> str:
    """What a failed HEAD of a bucket means, in words."""
    from botocore.exceptions import ClientError, NoCredentialsError

    if isinstance(error, NoCredentialsError):
        return (
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "(or AWS_PROFILE, or run with an instance role)"
        )
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in ("404", "NoSuchBucket"):
            return f"the bucket {bucket} does not exist: create it or use another bucket"
        if code in ("403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"):
            return f"S3 refused these credentials for {bucket} ({code}): check the AWS_* keys"
        return f"S3 answered {code} for {bucket}"
    return f"S3 is not reachable ({error}): check AWS_ENDPOINT_URL and the network"


def check_bucket(uri: str, setting: str) -> None:
    """An s3:// landing zone or lake: its bucket exists and the credentials may read it."""
    if not uri.startswith(("s3://", "s3a://")):
        return
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    bucket = urlparse(uri).netloc
    config = Config(connect_timeout=CONNECT_SECONDS, read_timeout=10, retries={"max_attempts": 1})
    try:
        boto3.client("s3", config=config).head_bucket(Bucket=bucket)
    except (BotoCoreError, ClientError) as error:
        raise PreflightError(f"{setting} {uri}: {_s3_problem(bucket, error)}") from None


def check_run(conf: Settings, landing: bool = True) -> None:
    """Everything `lakehouse ingest` needs before it starts Spark.

    `landing` is False when every table to ingest reads Kafka, not files.
    """
    if landing:
        check_landing(conf.landing)
        check_bucket(conf.landing, "the landing zone (--landing / LAKEHOUSE_LANDING)")
    check_lake(conf.lake)
    check_bucket(conf.lake, "the lake (--lake / LAKEHOUSE_LAKE)")
    check_catalog(conf)


ROLLED_BACK = (
    "completed commits are untouched and the next run rolls back the unfinished one, "
    "then applies the same files"
)


@dataclass(frozen=True)
class StorageFailure:
    """A storage failure told by a line of a failed run's text; `within`: the client's name."""

    marker: re.Pattern[str]
    cause: str
    fix: str
    within: tuple[str, ...] = ()


STORAGE_FAILURES = (
    StorageFailure(
        re.compile("No space left on device"),
        "the lake's disk is full",
        "free space there or point --lake / LAKEHOUSE_LAKE at a larger disk, then rerun",
    ),
    StorageFailure(
        re.compile(
            "Connection refused|Connection reset|ServiceUnavailable|Status Code: 503"
            "|Unable to execute HTTP request|AWSClientIOException"
        ),
        "S3 stopped answering during the run",
        "check the S3 endpoint (AWS_ENDPOINT_URL) and the network, then rerun",
        within=("s3a", "amazonaws"),
    ),
)


def storage_failure(error: BaseException) -> str | None:
    """A run that died on its storage (disk full, S3 gone), as one line; None otherwise.

    The text of a Spark failure holds the whole Java chain, so the storage
    cause is found whatever Hudi or Spark wrapped it in.
    """
    text = str(error)
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        text = "No space left on device"
    for failure in STORAGE_FAILURES:
        if failure.within and not any(name in text for name in failure.within):
            continue
        # The deepest cause that matches: the failure itself, not what wrapped it.
        lines = [line for line in text.splitlines() if failure.marker.search(line)]
        if lines:
            detail = lines[-1].strip().removeprefix("Caused by: ").removeprefix(": ")[:200]
            return f"{failure.cause} ({detail}): {failure.fix}; {ROLLED_BACK}"
    return None
