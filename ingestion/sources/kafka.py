"""Kafka itself as a source: a topic's records past the checkpoint, up to the latest offsets.

The checkpoint is the same as the landing zone's, the last consumed offset per
partition, committed in the Hudi commit metadata with the data (checkpoint.py);
a one-shot run reads from there to the end offsets it saw when planning, with
Spark's Kafka source in batch mode (startingOffsets / endingOffsets), so a run
that crashes re-reads exactly the same records. Records become landing lines
(decode/events.py) so the decoder is the same for both kinds: the value is the
line (JsonConverter's schema + payload), a null value (Debezium's tombstone
after a delete) the line `null`, which the decoder skips as a tombstone; the
key is not needed, the envelope carries the row's key columns.

A source whose connector writes Avro (Apicurio Registry's AvroConverter) gets
the registry's API URL: each record's writer schema is named by a global id
(sources/schema_registry.py); the ids of a batch are collected first, their
schemas fetched on the driver (an unknown id or an unreachable registry fails
the run before anything is written), and the executors decode the bodies
into the same lines as the Avro landing files (decode/avro.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ingestion.checkpoint import Checkpoint
from ingestion.decode.avro import decode_framed
from ingestion.decode.events import LINE_SCHEMA
from ingestion.errors import UserError
from ingestion.sources.base import SourceBatch
from ingestion.sources.schema_registry import (
    MAGIC_BYTE,
    VALUE_ID_HEADER,
    value_schema_id,
    writer_schemas,
)

log = logging.getLogger(__name__)

BYTES = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
TIMEOUT_SECONDS = 30
# How many records of a JSON topic's first batch are looked at for Avro framing
# (a tombstone has no value to look at).
PEEKED_RECORDS = 10
# (brokers, topic) this process has found JSON in: looked at on its first batch only.
_JSON_TOPICS: set[tuple[str, str]] = set()


class KafkaUnavailable(UserError):
    """The brokers do not answer; the message names them and the fix."""


class AvroReadAsJson(UserError):
    """A topic read as JSON holds Avro records; nothing of the batch is committed."""


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Records [start, end) of one partition."""

    partition: int
    start: int
    end: int


def plan_ranges(
    topic: str,
    bounds: Mapping[int, tuple[int, int]],
    committed: Mapping[int, int],
) -> SourceBatch[OffsetRange]:
    """What is new per partition, from (earliest, end) offsets and the checkpoint (pure).

    A partition's next record is the one after its last committed offset, or
    its earliest one when retention has removed that; the checkpoint after the
    batch is the last offset each range reads.
    """
    ranges, offsets = [], {}
    for partition, (earliest, end) in sorted(bounds.items()):
        start = max(committed.get(partition, -1) + 1, earliest)
        if start < end:
            ranges.append(OffsetRange(partition, start, end))
            offsets[partition] = end - 1
        else:
            offsets[partition] = committed.get(partition, end - 1)
    return SourceBatch(tuple(ranges), Checkpoint(topic, offsets))


@dataclass(frozen=True)
class TopicConsumer:
    """A JVM Kafka consumer (py4j) and the topic it reads."""

    jvm: Any
    consumer: Any
    topic: str

    @property
    def timeout(self) -> Any:
        return self.jvm.java.time.Duration.ofSeconds(TIMEOUT_SECONDS)

    def bounds(self) -> dict[int, tuple[int, int]]:
        """(earliest, end) offset of each partition; none while the topic is absent."""
        consumer, timeout = self.consumer, self.timeout
        if not consumer.listTopics(timeout).containsKey(self.topic):
            return {}
        partitions = self.jvm.java.util.ArrayList()
        for info in consumer.partitionsFor(self.topic, timeout):
            partitions.add(self._partition(info.partition()))
        earliest = consumer.beginningOffsets(partitions, timeout)
        ends = consumer.endOffsets(partitions, timeout)
        return {tp.partition(): (int(earliest.get(tp)), int(ends.get(tp))) for tp in partitions}

    def values(self, first: OffsetRange) -> list[tuple[bytes, dict[str, bytes]]]:
        """The first records' values from a range's start, each with its headers.

        Tombstones (no value) are left out; at most `max.poll.records` are read.
        """
        where = self._partition(first.partition)
        assigned = self.jvm.java.util.ArrayList()
        assigned.add(where)
        self.consumer.assign(assigned)
        self.consumer.seek(where, first.start)
        found = []
        for record in self.consumer.poll(self.timeout).records(where):
            if record.value() is not None:
                headers = {h.key(): bytes(h.value() or b"") for h in record.headers().toArray()}
                found.append((bytes(record.value()), headers))
        return found

    def _partition(self, partition: int) -> Any:
        return self.jvm.org.apache.kafka.common.TopicPartition(self.topic, partition)


class KafkaSource:
    """The `Source` of one Kafka topic."""

    def __init__(
        self,
        spark: SparkSession,
        servers: str,
        topic: str,
        options: Mapping[str, str],
        registry: str | None = None,
    ) -> None:
        self.spark = spark
        self.servers = servers
        self.topic = topic
        self.options = dict(options)
        self.registry = registry  # the schema registry's API URL when the topic is Avro

    def bounds(self) -> dict[int, tuple[int, int]]:
        """(earliest, end) offset of each partition; no partitions while the topic is absent."""
        with self._consumer() as consumer:
            return consumer.bounds()

    def pending(self, committed: Mapping[int, int]) -> SourceBatch[OffsetRange]:
        with self._consumer() as consumer:
            batch = plan_ranges(self.topic, consumer.bounds(), committed)
            checked = (self.servers, self.topic) in _JSON_TOPICS
            if self.registry is None and batch.items and not checked:
                self._refuse_avro(consumer.values(batch.items[0]))
        return batch

    def _refuse_avro(self, values: list[tuple[bytes, dict[str, bytes]]]) -> None:
        """Stop before reading Avro records as JSON text.

        Each would be quarantined as not UTF-8 or not a JSON object, with its
        offset committed past: a source whose `kafka_format` is left at its
        default (json) while its connector writes Avro is one line instead.
        """
        if any(value_schema_id(value, headers) is not None for value, headers in values):
            raise AvroReadAsJson(
                f"topic {self.topic} holds Avro records (Apicurio Registry's framing) but its "
                "source's kafka_format is json: set `kafka_format: avro` for that source in "
                "conf/tables.yml (or in the setting source_kafka_formats); nothing was committed"
            )
        _JSON_TOPICS.add((self.servers, self.topic))

    @contextmanager
    def _consumer(self) -> Iterator[TopicConsumer]:
        """A JVM Kafka consumer on the source's options, closed after use."""
        jvm = self.spark._jvm
        properties = jvm.java.util.Properties()
        settings = {
            **self.options,
            "bootstrap.servers": self.servers,
            "key.deserializer": BYTES,
            "value.deserializer": BYTES,
            "allow.auto.create.topics": "false",
            "default.api.timeout.ms": str(TIMEOUT_SECONDS * 1000),
            "max.poll.records": str(PEEKED_RECORDS),
        }
        for key, value in settings.items():
            properties.put(key, value)
        consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(properties)
        try:
            yield TopicConsumer(jvm, consumer, self.topic)
        except UserError:
            raise
        except Exception as error:  # py4j wraps the client's TimeoutException
            first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
            raise KafkaUnavailable(
                f"Kafka at {self.servers} did not answer for topic {self.topic} ({first}); "
                "start the local chain with `lakehouse cdc up` or set kafka_bootstrap_servers"
            ) from error
        finally:
            consumer.close()

    def read(self, batch: SourceBatch[OffsetRange]) -> DataFrame:
        """The batch's records as landing lines: file kafka://topic/partition, line = offset."""
        records = self._records(batch)
        where = F.concat(F.lit(f"kafka://{self.topic}/"), F.col("partition").cast("string"))
        if self.registry is not None:
            return self._avro_lines(records.select(where.alias("file"), "*"))
        return records.select(
            where.alias("file"),
            F.col("offset").cast("bigint").alias("line"),
            F.coalesce(F.col("value").cast("string"), F.lit("null")).alias("raw"),
            F.lit(None).cast("string").alias("schema"),
            F.lit(None).cast("string").alias("error"),
        )

    def _records(self, batch: SourceBatch[OffsetRange]) -> DataFrame:
        starting = {self.topic: {str(r.partition): r.start for r in batch.items}}
        ending = {self.topic: {str(r.partition): r.end for r in batch.items}}
        reader = (
            self.spark.read.format("kafka")
            .option("kafka.bootstrap.servers", self.servers)
            .option("assign", json.dumps({self.topic: [r.partition for r in batch.items]}))
            .option("startingOffsets", json.dumps(starting))
            .option("endingOffsets", json.dumps(ending))
            .option("includeHeaders", str(self.registry is not None).lower())
        )
        for key, value in self.options.items():
            reader = reader.option(f"kafka.{key}", value)
        return reader.load()

    def _avro_lines(self, records: DataFrame) -> DataFrame:
        """Apicurio-framed records decoded with their writer schemas from the registry."""
        framed = records.select(
            "file", F.col("offset").cast("bigint").alias("line"), *framing(F.col("value"))
        )
        ids = [row.global_id for row in framed.select("global_id").distinct().collect()]
        schemas = writer_schemas(self.registry, [i for i in ids if i is not None])
        rows = framed.rdd.map(tuple).mapPartitions(lambda part: decode_framed(part, schemas))
        return self.spark.createDataFrame(rows, LINE_SCHEMA)


def framing(value: Column) -> list[Column]:
    """The Avro body and its schema's global id: from the id header, else from the prefix.

    The converter's default puts the id in a header and the body alone in the
    value; with headers off the value is a 0 byte, the id's 8 bytes, the body.
    """
    ids = F.filter("headers", lambda h: h["key"] == VALUE_ID_HEADER)
    header = F.try_element_at(ids, F.lit(1))["value"]
    prefixed = value.isNotNull() & (F.substring(value, 1, 1) == F.lit(bytearray([MAGIC_BYTE])))
    return [
        F.when(header.isNotNull() | ~prefixed, value)
        .otherwise(F.expr("substring(value, 10)"))
        .alias("body"),
        F.when(header.isNotNull(), _long(header))
        .when(prefixed, _long(F.substring(value, 2, 8)))
        .alias("global_id"),
    ]


def _long(big_endian: Column) -> Column:
    return F.conv(F.hex(big_endian), 16, 10).cast("bigint")
