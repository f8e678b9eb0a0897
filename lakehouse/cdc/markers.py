"""Markers: know that Debezium has published every change made so far.

A marker is a row with a fresh token written to a small table of each
source database after the changes; Debezium reads each database's log in
order, so once the marker's event is in Kafka, every change before it is
too. `cdc` runs and the end-to-end test wait on markers instead of guessing
how long the connectors take, and the wait is the chain's capture latency.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from ingestion.config import load_document
from ingestion.plan import kafka_source
from ingestion.settings import Settings
from ingestion.sources import kafka_client
from lakehouse.cdc import connectors, databases
from lakehouse.stack import StackError

TABLE = databases.MARKER_TABLE
TOPICS = {"ems": f"tickit.ems.{TABLE}", "ecomm": f"tickit.ecomm.{TABLE}"}
# While `wait_capturing` waits, a marker is written again this often (seconds).
REMARK_SECONDS = 5.0


def write_markers(conf: Settings) -> dict[str, int]:
    """Insert a fresh token into each database's marker table; return topic -> token."""
    token = time.time_ns()
    with closing(databases.postgres(conf)) as connection:
        connection.execute(f"create table if not exists ems.{TABLE} (token bigint primary key)")
        connection.execute(f"insert into ems.{TABLE} values (%s)", (token,))
        connection.commit()
    with closing(databases.mariadb(conf)) as connection, connection.cursor() as cursor:
        cursor.execute(f"create table if not exists ecomm.{TABLE} (token bigint primary key)")
        cursor.execute(f"insert into ecomm.{TABLE} values (%s)", (token,))
        connection.commit()
    return {topic: token for topic in TOPICS.values()}


def _published(spark: SparkSession, conf: Settings, topic: str, token: int) -> bool:
    system = next(name for name, marker_topic in TOPICS.items() if marker_topic == topic)
    source = kafka_source(spark, conf, topic, load_document().sources[system])
    batch = source.pending({})
    if batch.empty:
        return False
    lines = source.read(batch)
    return lines.where(F.col("raw").contains(f'"token":{token}')).limit(1).count() > 0


def wait_published(
    spark: SparkSession,
    conf: Settings,
    markers: dict[str, int],
    timeout: float = 120,
    log: Callable[[str], None] = print,
) -> float:
    """Poll Kafka until every marker is there; return the seconds it took.

    A connector task that fails meanwhile (a broker restart can do that) is
    restarted, or the wait would only run out: connectors.Restarter.
    """
    started = time.monotonic()
    waiting = dict(markers)
    restarter = connectors.Restarter(conf, log)
    while waiting:
        restarter.check(connectors.states(conf))
        waiting = {t: k for t, k in waiting.items() if not _published(spark, conf, t, k)}
        if waiting and time.monotonic() - started > timeout:
            raise StackError(
                f"changes not published to Kafka within {timeout:.0f}s (waiting for "
                f"{', '.join(waiting)}); see `lakehouse cdc status` and `lakehouse cdc logs`"
            )
        if waiting:
            time.sleep(0.5)
    return round(time.monotonic() - started, 2)


def _records(reader: kafka_client.TopicReader) -> dict[str, int]:
    """Each marker topic's end offsets summed: it grows with every published marker."""
    return {t: sum(end for _, end in reader.bounds(t).values()) for t in TOPICS.values()}


def wait_capturing(conf: Settings, deadline: float, log: Callable[[str], None] = print) -> None:
    """Return once each connector has published a marker written after it started.

    A connector reports RUNNING before its first snapshot has taken its log
    position. A table created in between (a `cdc load` right after `up`) is
    neither in the snapshot nor created in the log the connector streams, so
    MariaDB's connector fails on the table's first row and its restart
    snapshots again, without the deletes made meanwhile. A published marker
    shows the position is taken; one written too early for its own table is
    lost the same way, so the marker is written again while waiting, and a
    task that fails on it is restarted (connectors.Restarter).
    """
    reader = kafka_client.TopicReader(conf.kafka_servers, conf.kafka_options)
    restarter = connectors.Restarter(conf, log)
    try:
        before, marked = _records(reader), 0.0
        while any(after <= before[t] for t, after in _records(reader).items()):
            if time.monotonic() > deadline:
                raise StackError(
                    "the connectors published no marker in time; see `lakehouse cdc status` "
                    "and `lakehouse cdc logs --service connect`"
                )
            if time.monotonic() - marked > REMARK_SECONDS:
                write_markers(conf)
                marked = time.monotonic()
            restarter.check(connectors.states(conf))
            time.sleep(0.5)
    finally:
        reader.close()
