"""A whole database by pattern: a source's tables found from its topics.

A source with `include` patterns (conf/tables.yml) serves, besides the tables
listed one by one, every topic `<topic_prefix>.<schema>.<table>` whose
`schema.table` one of them matches in full and no `exclude` pattern does:
Debezium's own `table.include.list` convention. A found table is named for
its table part and takes the config's defaults; its key is the Debezium key
schema of its Kafka records. A listed table always wins over a found one of
the same topic or name. Topics come from the Kafka broker for a `kafka`
source, from the landing zone's `topics/` folders for a `landing` one (whose
sink files carry no keys: a found landing table needs its key listed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.config import Source, TableConfig, TableDocument, load_document
from ingestion.paths import to_local_path
from ingestion.settings import Settings, settings
from ingestion.sources import kafka_client, schema_registry

NOT_A_NAME = re.compile(r"[^A-Za-z0-9_]")
NO_KEY_FIX = (
    "its records carry no key (a table without a primary key): list it in conf/tables.yml "
    "with `key:`, and give it REPLICA IDENTITY FULL at a PostgreSQL source"
)
LANDING_KEY_FIX = "landing files carry no key: list it in conf/tables.yml with `key:`"


@dataclass(frozen=True)
class Unserved:
    """A topic a pattern matches that cannot be served yet, and what to do about it."""

    topic: str
    reason: str


@dataclass
class Served:
    """The tables a run serves: listed ones and found ones; the topics left out and why."""

    tables: dict[str, TableConfig]
    found: list[str] = field(default_factory=list)
    unserved: list[Unserved] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # a source's topics no pattern takes


def matching(source: Source, topic: str) -> str | None:
    """The topic's `schema.table` when the source's patterns take it, else None."""
    prefix = f"{source.topic_prefix}."
    if not source.include or not topic.startswith(prefix):
        return None
    name = topic.removeprefix(prefix)
    if name.count(".") != 1:
        return None
    taken = any(p.fullmatch(name) for p in source.include)
    return name if taken and not any(p.fullmatch(name) for p in source.exclude) else None


def table_name(schema_table: str) -> str:
    """The bronze name of a found table: its table part, as an identifier."""
    name = NOT_A_NAME.sub("_", schema_table.split(".", 1)[1])
    return name if name[:1].isalpha() or name[:1] == "_" else f"_{name}"


def discover(
    document: TableDocument,
    topics_of: Callable[[Source], list[str]],
    key_of: Callable[[Source, str], list[str] | None],
) -> Served:
    """Listed tables, and the tables found from the topics of every source with patterns.

    `key_of` gives a topic's key columns; None when its records have none, []
    when it has no record yet (found once its first one arrives).
    """
    served = Served(dict(document.tables))
    listed = {table.topic for table in document.tables.values()}
    for source in document.sources.values():
        if not source.include:
            continue
        for topic in sorted(topics_of(source)):
            if topic in listed:
                continue
            if (schema_table := matching(source, topic)) is None:
                served.unread.append(topic)
                continue
            name = table_name(schema_table)
            key = key_of(source, topic)
            if key == []:
                continue
            if name in served.tables:
                reason = f"its name {name} is taken by {served.tables[name].topic}: list it"
                served.unserved.append(Unserved(topic, reason + " in conf/tables.yml"))
            elif key is None:
                fix = LANDING_KEY_FIX if source.kind == "landing" else NO_KEY_FIX
                served.unserved.append(Unserved(topic, fix))
            else:
                served.tables[name] = document.found_table(source, name, topic, key)
                served.found.append(name)
    return served


def served_tables(conf: Settings | None = None, document: TableDocument | None = None) -> Served:
    """`discover` on this machine's broker and landing zone (the broker only when asked)."""
    conf, document = conf or settings(), document or load_document()
    keys = kafka_client.TopicReader(conf.kafka_servers, conf.kafka_options)
    try:
        return discover(
            document,
            lambda source: source_topics(conf, source),
            lambda source, topic: _key_of(conf, keys, source, topic),
        )
    finally:
        keys.close()


def source_topics(conf: Settings, source: Source) -> list[str]:
    """The topics a source has now: the broker's, or the landing zone's folders."""
    prefix = f"{source.topic_prefix}."
    if source.kind == "kafka":
        return kafka_client.topics(conf.kafka_servers, prefix, conf.kafka_options)
    return landing_topics(conf.landing, prefix)


def landing_topics(landing: str, prefix: str) -> list[str]:
    """The landing zone's topic folders (`topics/<topic>/`) that start with `prefix`."""
    local = to_local_path(landing)
    if local is not None:
        root = Path(local) / "topics"
        folders = [p.name for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    else:
        folders = _s3_folders(landing.rstrip("/") + "/topics/")
    return sorted(name for name in folders if name.startswith(prefix))


def _s3_folders(uri: str) -> list[str]:
    """The folder names right under an s3:// prefix."""
    import boto3  # only a landing zone on S3 needs it

    bucket, _, prefix = uri.removeprefix("s3a://").removeprefix("s3://").partition("/")
    pages = boto3.client("s3").get_paginator("list_objects_v2")
    return [
        common["Prefix"][len(prefix) :].rstrip("/")
        for page in pages.paginate(Bucket=bucket, Prefix=prefix, Delimiter="/")
        for common in page.get("CommonPrefixes", [])
    ]


def _key_of(
    conf: Settings, keys: kafka_client.TopicReader, source: Source, topic: str
) -> list[str] | None:
    """A Kafka topic's key columns, from its first key's JSON schema or its Avro one."""
    if source.kind != "kafka":
        return None
    key, headers = keys.key(topic)
    if source.kafka_format == "avro":
        return avro_key_columns(conf.registry_url, key, headers)
    return key_columns(key)


def avro_key_columns(api: str, key: bytes | None, headers: dict[str, bytes]) -> list[str] | None:
    """The field names of an Apicurio-framed Avro key's writer schema, else None."""
    if key == b"":
        return []
    global_id = schema_registry.key_schema_id(key, headers) if key else None
    if global_id is None:
        return None
    schema = json.loads(schema_registry.writer_schemas(api, [global_id])[global_id])
    names = [f.get("name") for f in schema.get("fields", []) if isinstance(f, dict)]
    return [n for n in names if isinstance(n, str)] or None


def key_columns(key: bytes | None) -> list[str] | None:
    """The column names of a Debezium record key (JSON with its schema), else None.

    [] for b"" (no record yet), as `discover` takes it.
    """
    if key == b"":
        return []
    if not key:
        return None
    try:
        schema = json.loads(key).get("schema") or {}
    except (ValueError, AttributeError):
        return None
    names = [f.get("field") for f in schema.get("fields", []) if isinstance(f, dict)]
    return [n for n in names if isinstance(n, str)] or None
