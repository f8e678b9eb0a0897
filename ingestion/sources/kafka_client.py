"""The broker from Python, without Spark: its topics, and a topic's record key schema.

Discovery (ingestion/discovery.py) runs before a run's Spark session starts
and between a continuous service's polls, so it uses kafka-python rather than
the JVM client of kafka.py. The settings' `kafka_options` are the Java
client's property names; those kafka-python shares (`security.protocol`,
`sasl.mechanism`, `ssl.cafile`, ...) are passed with dots as underscores.
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


class KeyReader:
    """Reads the key of a topic's first records, on one consumer opened when first needed."""

    def __init__(self, servers: str, options: dict[str, str] | None = None) -> None:
        self.servers, self.options = servers, options or {}
        self._consumer: KafkaConsumer | None = None

    def key(self, topic: str) -> bytes | None:
        """The first non-null key among the topic's earliest records.

        b"" when the topic has no record yet, None when its records have no key.
        """
        if self._consumer is None:
            self._consumer = _consumer(self.servers, self.options)
        consumer = self._consumer
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        if not partitions:
            return b""
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        polled = consumer.poll(timeout_ms=TIMEOUT_MS, max_records=50)
        keys = [record.key for records in polled.values() for record in records]
        return next((key for key in keys if key), None if keys else b"")

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
