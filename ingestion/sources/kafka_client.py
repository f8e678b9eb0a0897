"""The broker from Python, without Spark: its topics, their offsets and records' keys.

Discovery (ingestion/discovery.py) runs before a run's Spark session starts
and between a continuous service's polls, and `lakehouse status` starts no
Spark at all, so both use kafka-python rather than the JVM client of
kafka.py. The settings' `kafka_options` are the Java client's property names;
those kafka-python shares (`security.protocol`, `sasl.mechanism`,
`ssl.cafile`, ...) are passed with dots as underscores.
"""

from __future__ import annotations

from typing import Any

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from ingestion.errors import UserError

TIMEOUT_MS = 10_000


class BrokerUnavailable(UserError):
    """The brokers do not answer; the message names them and the fix."""


def _config(servers: str, options: dict[str, str]) -> dict[str, Any]:
    shared = {
        name.replace(".", "_"): value
        for name, value in options.items()
        if name.replace(".", "_") in KafkaConsumer.DEFAULT_CONFIG
    }
    return {
        **shared,
        "bootstrap_servers": servers.split(","),
        "enable_auto_commit": False,
        "request_timeout_ms": TIMEOUT_MS + 1000,
    }


def _consumer(servers: str, options: dict[str, str]) -> KafkaConsumer:
    try:
        return KafkaConsumer(**_config(servers, options))
    except KafkaError as error:
        raise BrokerUnavailable(
            f"Kafka at {servers} did not answer ({type(error).__name__}); start the local "
            "chain with `lakehouse cdc up` or set kafka_bootstrap_servers"
        ) from error


def topics(servers: str, prefix: str, options: dict[str, str] | None = None) -> list[str]:
    """The broker's topics that start with `prefix`."""
    consumer = _consumer(servers, options or {})
    try:
        return sorted(t for t in consumer.topics() if t.startswith(prefix))
    finally:
        consumer.close()


class TopicReader:
    """Reads topics' records and offsets, on one consumer opened when first needed."""

    def __init__(self, servers: str, options: dict[str, str] | None = None) -> None:
        self.servers, self.options = servers, options or {}
        self._consumer: KafkaConsumer | None = None

    @property
    def consumer(self) -> KafkaConsumer:
        if self._consumer is None:
            self._consumer = _consumer(self.servers, self.options)
        return self._consumer

    def _partitions(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in self.consumer.partitions_for_topic(topic) or ()]

    def key(self, topic: str) -> tuple[bytes | None, dict[str, bytes]]:
        """The first non-null key among the topic's earliest records, with its record's headers.

        b"" when the topic has no record yet, None when its records have no key.
        """
        partitions = self._partitions(topic)
        if not partitions:
            return b"", {}
        self.consumer.assign(partitions)
        self.consumer.seek_to_beginning(*partitions)
        polled = self.consumer.poll(timeout_ms=TIMEOUT_MS, max_records=50)
        records = [record for batch in polled.values() for record in batch]
        keyed = next((record for record in records if record.key), None)
        if keyed is None:
            return (None if records else b""), {}
        return keyed.key, dict(keyed.headers or [])

    def bounds(self, topic: str) -> dict[int, tuple[int, int]]:
        """(earliest, end) offset of each partition, as kafka.py's `bounds` reads them."""
        partitions = self._partitions(topic)
        try:
            earliest = self.consumer.beginning_offsets(partitions)
            ends = self.consumer.end_offsets(partitions)
        except KafkaError as error:
            raise BrokerUnavailable(
                f"Kafka at {self.servers} did not give the offsets of {topic} "
                f"({type(error).__name__})"
            ) from error
        return {tp.partition: (earliest[tp], ends[tp]) for tp in partitions}

    def timestamp_ms(self, topic: str, partition: int, offset: int) -> int | None:
        """The timestamp of the record at `offset` (Kafka's, the time it was produced)."""
        where = TopicPartition(topic, partition)
        self.consumer.assign([where])
        self.consumer.seek(where, offset)
        polled = self.consumer.poll(timeout_ms=TIMEOUT_MS, max_records=1)
        return next((r.timestamp for records in polled.values() for r in records), None)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
