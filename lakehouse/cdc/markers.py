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
from lakehouse.cdc import connectors, databases
from lakehouse.stack import StackError

TABLE = databases.MARKER_TABLE
TOPICS = {"ems": f"tickit.ems.{TABLE}", "ecomm": f"tickit.ecomm.{TABLE}"}


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
