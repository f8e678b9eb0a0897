"""Where things are: Hadoop URIs for user paths, and the lake folder of each table.

Kept apart from the sources and the checkpoint so that both can use it without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingestion.config import TableConfig
from ingestion.settings import Settings

QUARANTINE = "_quarantine"
# `lakehouse reconcile`'s results: a row per table per check, in the bronze database.
RECONCILED = "_reconcile"


def to_hadoop_uri(uri: str) -> str:
    """s3:// (boto3, users) -> s3a:// (Hadoop); local paths -> file: URIs."""
    if uri.startswith("s3://"):
        return "s3a://" + uri[len("s3://") :]
    if "://" in uri or uri.startswith("file:"):
        return uri
    return "file://" + uri


def to_local_path(uri: str) -> Path | None:
    """The local path of a plain path or file: URI; None for other stores (s3a://...)."""
    if uri.startswith("file:"):
        return Path("/" + uri.removeprefix("file:").lstrip("/"))
    return None if "://" in uri else Path(uri)


def table_path(conf: Settings, database: str, table: str) -> str:
    """A table's folder in the lake: `<lake>/<database>/<table>`."""
    return f"{conf.lake.rstrip('/')}/{database}/{table}"


@dataclass(frozen=True)
class TablePaths:
    """The three Hudi tables one bronze table's run writes to."""

    bronze: str
    changelog: str
    quarantine: str  # shared by every bronze table of the database

    @classmethod
    def of(cls, conf: Settings, table: TableConfig) -> TablePaths:
        return cls(
            bronze=table_path(conf, table.database, table.name),
            changelog=table_path(conf, table.database, table.changelog_name),
            quarantine=table_path(conf, table.database, QUARANTINE),
        )
