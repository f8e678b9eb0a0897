"""The Confluent S3 sink's side: file layout, rotation, and where bytes are written.

Files follow the DailyPartitioner:
`topics/<topic>/year=YYYY/month=MM/day=dd/<topic>+<partition>+<startOffset>.<ext>`
with the start offset zero-padded to 10 digits. A topic partition's open file
is committed when it holds `flush.size` records, when the day changes (each
batch lands on its own day) and, with schemas, when the value schema changes
(`schema.compatibility=NONE`). Output goes to a local folder or an `s3://`
prefix through boto3 (endpoint and credentials from the usual AWS variables).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from ingestion.errors import UserError
from lakehouse.cdc.generate.formats import LandingFormat
from lakehouse.cdc.generate.seeds import derive_bytes
from lakehouse.cdc.generate.stream import Unit

log = logging.getLogger(__name__)


class Storage(Protocol):
    """Somewhere to put files, addressed by paths relative to the output root."""

    def put(self, path: str, data: bytes) -> None: ...

    def describe(self, path: str) -> str: ...


class LocalStorage:
    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def describe(self, path: str) -> str:
        return str(self.root / path)


class S3Storage:
    """An `s3://bucket/prefix`; the bucket must exist, as for the real sink."""

    def __init__(self, bucket: str, prefix: str, client: Any | None = None) -> None:
        import boto3

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.client = client or boto3.client("s3")
        try:
            self.client.head_bucket(Bucket=bucket)
        except Exception as error:
            raise UserError(f"cannot use bucket s3://{bucket}: {error}") from error

    def key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def put(self, path: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.key(path), Body=data)

    def describe(self, path: str) -> str:
        return f"s3://{self.bucket}/{self.key(path)}"


def open_storage(out: str) -> Storage:
    """A local folder or an `s3://bucket/prefix` URI."""
    if out.startswith("s3://"):
        bucket, _, prefix = out[len("s3://") :].partition("/")
        if not bucket:
            raise UserError(f"--out {out}: no bucket in the S3 URI")
        return S3Storage(bucket, prefix)
    if "://" in out:
        raise UserError(f"--out {out}: only local folders and s3:// URIs are supported")
    return LocalStorage(Path(out))


def landing_path(topic: str, partition: int, start_offset: int, day: date, extension: str) -> str:
    return (
        f"topics/{topic}/year={day.year:04d}/month={day.month:02d}/day={day.day:02d}/"
        f"{topic}+{partition}+{start_offset:010d}.{extension}"
    )


@dataclass
class LandedFile:
    """One committed landing file and what is in it."""

    path: str
    topic: str
    partition: int
    batch: int
    start_offset: int
    records: int
    size: int
    ops: Counter[str] = field(default_factory=Counter)


class PartitionWriter:
    """The sink task's writer for one topic partition."""

    def __init__(
        self,
        topic: str,
        partition: int,
        fmt: LandingFormat,
        storage: Storage,
        flush_size: int,
        seed: int,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.fmt = fmt
        self.storage = storage
        self.flush_size = flush_size
        self.seed = seed
        self.next_offset = 0
        self.files: list[LandedFile] = []
        self._records: list[Any] = []
        self._ops: Counter[str] = Counter()
        self._schema: tuple[str, int] | None = None
        self._start = 0
        self._batch = 0
        self._day = date.min

    def write(self, unit: Unit, batch: int, day: date) -> int:
        """Append a unit (event, then its tombstone); returns records written."""
        event = unit.event
        if not self.fmt.accepts(event):
            return 0
        schema = self.fmt.schema_id(event)
        changed = schema is not None and self._schema is not None and schema != self._schema
        if self._records and (day != self._day or changed):
            self.commit()
        self._append(self.fmt.record(event), event.op, schema, batch, day, unit)
        if unit.tombstone:
            self._append(self.fmt.tombstone, "tombstone", None, batch, day, unit)
        return 2 if unit.tombstone else 1

    def _append(
        self,
        record: Any,
        op: str,
        schema: tuple[str, int] | None,
        batch: int,
        day: date,
        unit: Unit,
    ) -> None:
        if not self._records:
            self._start, self._batch, self._day = self.next_offset, batch, day
            self._ops = Counter()
        if schema is not None:
            self._schema = schema
        self._records.append(record)
        self._ops[op] += 1
        if unit.duplicate:
            self._ops["duplicate"] += 1
        if unit.late:
            self._ops["late"] += 1
        self.next_offset += 1
        if len(self._records) >= self.flush_size:
            self.commit()

    def commit(self) -> None:
        """Write the open file, named by its first offset, and start a new one."""
        if not self._records:
            return
        path = landing_path(self.topic, self.partition, self._start, self._day, self.fmt.extension)
        sync = derive_bytes(self.seed, "avro-sync", path)
        data = self.fmt.render(self._records, self._schema, sync)
        self.storage.put(path, data)
        self.files.append(
            LandedFile(
                path,
                self.topic,
                self.partition,
                self._batch,
                self._start,
                len(self._records),
                len(data),
                self._ops,
            )
        )
        log.debug("wrote %s (%d records)", path, len(self._records))
        self._records = []
