"""`lakehouse status`: how far each bronze table is behind its source, told without Spark.

For every table a run would serve (the listed ones and those a source's
patterns find): its newest commit, "data as of" (the newest source commit
time bronze holds, which each bronze commit records), the lag (now minus
that), the backlog (the sink files or Kafka records past the committed
checkpoint: what the next run reads, planned as the engine plans it) and how
long ago the oldest of them landed. The lag grows while the source is quiet;
the backlog's age does not, so it is what the exit code follows: a table
whose oldest unapplied change landed more than `status_behind_seconds` ago
makes the command exit 5, named, for cron or any alerting. The continuous
service's health file and the topics patterns match but no table can read
are shown beside. It reads the lake's Hudi timelines as files, so it takes
no lock, writes nothing, and answers in seconds (decision 0017).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from ingestion.checkpoint import oldest
from ingestion.config import TableConfig, load_document, select_tables
from ingestion.discovery import served_tables
from ingestion.nothing_new import Committed, Unsure, committed, local_path, topic_files
from ingestion.paths import TablePaths
from ingestion.settings import Settings, settings
from ingestion.sources import kafka_client
from ingestion.sources.kafka import plan_ranges
from ingestion.sources.landing import plan_files
from ingestion.table_state import NEWEST_SOURCE_KEY

EXIT_BEHIND = 5


@dataclass(frozen=True)
class TableStatus:
    """One bronze table against its source, at `LakeStatus.checked_at`."""

    table: str
    source: str  # landing | kafka
    committed_at: str | None  # the newest completed bronze commit, UTC
    data_as_of: str | None  # the newest source commit time bronze holds, UTC
    lag_seconds: float | None  # checked_at minus data_as_of
    backlog: int  # sink files or Kafka records the next run reads
    backlog_unit: str  # files | records
    behind_seconds: float  # how long ago the oldest of them landed; 0 with none
    note: str = ""  # what could not be read, and so is not counted


@dataclass(frozen=True)
class LakeStatus:
    """Every served table's status, the topics left out, and the continuous service."""

    checked_at: str
    behind_threshold_seconds: float
    tables: tuple[TableStatus, ...]
    unserved: tuple[dict[str, str], ...] = ()  # {topic, reason}: matched, cannot be read
    unread: tuple[str, ...] = ()  # a pattern source's topics that no table reads
    service: dict[str, Any] | None = None  # the health file, as written
    behind: tuple[str, ...] = ()  # tables past the threshold

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def _hudi_time(instant: str) -> datetime:
    """A Hudi instant (yyyyMMddHHmmssSSS, the writer's local time zone) as a moment."""
    return datetime.strptime(instant, "%Y%m%d%H%M%S%f").astimezone()


def _landing_backlog(conf: Settings, topic: str, offsets: dict[int, int]) -> list[float]:
    """The landing times (file modification times) of the sink files the next run reads."""
    listed, _ = topic_files(conf.landing, topic)
    new = plan_files(topic, listed, offsets).items
    return [os.stat(local_path(f.path)).st_mtime for f in new]


def _kafka_backlog(
    reader: kafka_client.TopicReader, topic: str, offsets: dict[int, int]
) -> tuple[int, float | None]:
    """Records the next run reads, and when the oldest of them was produced."""
    ranges = plan_ranges(topic, reader.bounds(topic), offsets).items
    times = [reader.timestamp_ms(topic, r.partition, r.start) for r in ranges]
    known = [t / 1000 for t in times if t is not None]
    return sum(r.end - r.start for r in ranges), min(known, default=None)


def _newest_source(bronze: Committed) -> datetime | None:
    """The newest source commit time a bronze table holds, as its last commit recorded it."""
    newest_ms = bronze.metadata.get(NEWEST_SOURCE_KEY)
    return datetime.fromtimestamp(int(newest_ms) / 1000, UTC) if newest_ms else None


def data_as_of(conf: Settings, tables: list[TableConfig]) -> dict[str, str]:
    """Each table's newest source commit time (UTC), read now; tables without one left out.

    What a dbt build that starts now reads at least: the job records it with its
    dbt step, and the dashboard's pages show it as their marts' "data as of".
    """
    found = {}
    for table in tables:
        try:
            as_of = _newest_source(committed(TablePaths.of(conf, table).bronze))
        except (Unsure, OSError):
            continue
        if as_of is not None:
            found[table.name] = _utc(as_of)
    return found


def table_status(
    conf: Settings, table: TableConfig, reader: kafka_client.TopicReader, now: float
) -> TableStatus:
    """One table's commit, data time, lag and backlog; a note for what cannot be read."""
    paths = TablePaths.of(conf, table)
    unit = "records" if table.source.kind == "kafka" else "files"
    try:
        bronze, changelog = committed(paths.bronze), committed(paths.changelog)
        offsets = oldest([bronze.checkpoint(table.topic), changelog.checkpoint(table.topic)])
        if table.source.kind == "kafka":
            backlog, landed = _kafka_backlog(reader, table.topic, offsets)
        else:
            times = _landing_backlog(conf, table.topic, offsets)
            backlog, landed = len(times), min(times, default=None)
    except (Unsure, OSError, kafka_client.BrokerUnavailable) as error:
        return TableStatus(table.name, table.source.kind, None, None, None, 0, unit, 0.0,
                           f"not read: {error}")  # fmt: skip
    as_of = _newest_source(bronze)
    done = _hudi_time(bronze.completed_at) if bronze.completed_at else None
    return TableStatus(
        table.name,
        table.source.kind,
        _utc(done) if done else None,
        _utc(as_of) if as_of else None,
        round(now - as_of.timestamp(), 1) if as_of else None,
        backlog,
        unit,
        round(max(0.0, now - landed), 1) if landed is not None else 0.0,
    )


def _service(conf: Settings) -> dict[str, Any] | None:
    """The continuous service's health file, when one was written."""
    try:
        return json.loads(conf.ingest_health_file.read_text())
    except (OSError, ValueError):
        return None


def lake_status(conf: Settings | None = None, names: list[str] | None = None) -> LakeStatus:
    """The status of the served tables (all, or `names`), checked now."""
    conf = conf or settings()
    served = served_tables(conf, load_document(database=conf.bronze_database))
    now = time.time()
    reader = kafka_client.TopicReader(conf.kafka_servers, conf.kafka_options)
    try:
        tables = tuple(
            table_status(conf, table, reader, now) for table in select_tables(served.tables, names)
        )
    finally:
        reader.close()
    threshold = conf.status_behind_seconds
    return LakeStatus(
        _utc(datetime.fromtimestamp(now, UTC)),
        threshold,
        tables,
        tuple({"topic": u.topic, "reason": u.reason} for u in served.unserved),
        tuple(served.unread),
        _service(conf),
        tuple(t.table for t in tables if t.behind_seconds > threshold),
    )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def status_table(status: LakeStatus) -> Table:
    """The per-table screen of `lakehouse status`."""
    table = Table(title=f"lake status at {status.checked_at}", title_justify="left")
    notes = any(t.note for t in status.tables)
    columns = ["table", "source", "last commit", "data as of", "lag s", "backlog", "behind s"]
    for column in columns + (["note"] if notes else []):
        table.add_column(column, justify="right" if column.endswith(" s") else "left")
    for t in status.tables:
        behind = _seconds(t.behind_seconds)
        table.add_row(t.table, t.source, t.committed_at or "none yet", t.data_as_of or "",
                      _seconds(t.lag_seconds), f"{t.backlog:,} {t.backlog_unit}",
                      f"[red]{behind}[/red]" if t.table in status.behind else behind,
                      *([t.note] if notes else []))  # fmt: skip
    return table


def summary_lines(status: LakeStatus) -> list[str]:
    """What follows the table: the service, the topics left out, the one-line verdict."""
    lines = []
    if (service := status.service) is not None:
        lines.append(f"continuous service: {service.get('state')} (pid {service.get('pid')}, "
                     f"last poll {service.get('last_poll_at')}, "
                     f"last batch {service.get('last_batch_at')})")  # fmt: skip
    lines += [f"topic {u['topic']} not served: {u['reason']}" for u in status.unserved]
    if status.unread:
        lines.append(f"topics no table reads: {', '.join(status.unread)}")
    if status.behind:
        late = {t.table: t for t in status.tables}
        named = ", ".join(
            f"{n} ({late[n].backlog:,} {late[n].backlog_unit}, oldest {late[n].behind_seconds:,.0f}"
            " s ago)"
            for n in status.behind
        )
        lines.append(f"behind past {status.behind_threshold_seconds:g} s: {named}")
    else:
        lines.append(
            f"status: {len(status.tables)} table(s), none behind past "
            f"{status.behind_threshold_seconds:g} s"
        )
    return lines
