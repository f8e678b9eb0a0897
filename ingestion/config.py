"""The table config (conf/tables.yml): load, validate, typed objects.

Validation runs before any Spark work, and every error names the file, the
table and the field at fault, so a typo never becomes a half-written table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ingestion.decode.types import FieldType, UnknownTypeError, parse_config_type
from ingestion.errors import UserError
from ingestion.settings import IDENTIFIER, PROJECT_DIR, settings

TABLES_FILE = PROJECT_DIR / "conf" / "tables.yml"
CONNECTORS = ("postgresql", "mysql", "sqlserver")
DECIMAL_MODES = ("precise", "double", "string")
# Where a source's change records are read: the landing zone's sink files, or Kafka itself.
SOURCE_KINDS = ("landing", "kafka")
# How Kafka Connect serialises a source's Kafka topics: JsonConverter with schemas, or
# Apicurio Registry's AvroConverter (the writer schemas in the registry).
KAFKA_FORMATS = ("json", "avro")
ORDERINGS = ("source_position", "source_ts")
TABLE_TYPES = ("cow", "mor")
DELETE_MODES = ("soft", "hard")
TRUNCATE_MODES = ("delete_all", "ignore")
# Names that reach SQL and paths: plain identifiers (IDENTIFIER), and Kafka's topic alphabet.
TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")


class ConfigError(UserError):
    """The table config is invalid; the message names file, table and field."""


@dataclass(frozen=True)
class Source:
    """A source system: which Debezium connector wrote its topics, and where they are read.

    With `include` patterns (Debezium's `schema.table` regular expressions) its
    tables are also found from the topics `<topic_prefix>.<schema>.<table>`
    (ingestion/discovery.py), not only listed one by one.
    """

    name: str
    connector: str
    decimal_handling: str = "precise"
    kind: str = "landing"
    kafka_format: str = "json"
    topic_prefix: str = ""
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    # The environment variable holding the source database's URL
    # (postgresql://user:password@host:port/database, mysql://...), which
    # `lakehouse reconcile` compares bronze with; kept out of the file as a secret.
    database_url_env: str = ""


@dataclass(frozen=True)
class TableConfig:
    """One bronze table and the topic it is built from."""

    name: str
    source: Source
    topic: str
    key: tuple[str, ...]
    database: str
    ordering: str = "source_position"
    partition_by: tuple[str, ...] = ()
    table_type: str = "cow"
    buckets: int | None = None  # Hudi's bucket index with this many buckets, else a global index
    delete_mode: str = "soft"
    truncate: str = "delete_all"
    columns: dict[str, FieldType] = field(default_factory=dict)

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def changelog_name(self) -> str:
        return f"{self.name}_changelog"


class _Reader:
    """Pulls typed fields out of one table's mapping, naming the place of any error."""

    def __init__(self, path: Path, where: str, values: dict[str, Any]) -> None:
        self.path, self.where, self.values = path, where, values

    def fail(self, name: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.path}: {self.where}, field '{name}': {problem}")

    def text(self, name: str, default: str | None = None) -> str:
        value = self.values.get(name, default)
        if not isinstance(value, str) or not value:
            raise self.fail(name, "is required and must be a non-empty string")
        return value

    def identifier(self, name: str, value: str, pattern: re.Pattern[str] = IDENTIFIER) -> str:
        """A name that reaches SQL or a path: letters, digits and underscores only."""
        if not pattern.fullmatch(value):
            raise self.fail(name, f"{value!r} is not a valid name (allowed: {pattern.pattern})")
        return value

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        value = self.text(name, default)
        if value not in options:
            raise self.fail(name, f"'{value}' is not one of {', '.join(options)}")
        return value

    def count(self, name: str) -> int | None:
        """An optional whole number of at least 1."""
        value = self.values.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(name, f"{value!r} is not a whole number of at least 1")
        return value

    def patterns(self, name: str) -> tuple[re.Pattern[str], ...]:
        """Regular expressions, each matching a whole `schema.table`, in any case (as Debezium)."""
        value = self.values.get(name, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(name, "must be a regular expression or a list of them")
        try:
            return tuple(re.compile(pattern, re.IGNORECASE) for pattern in value)
        except re.error as error:
            raise self.fail(name, f"not a regular expression: {error}") from error

    def names(self, name: str, required: bool) -> tuple[str, ...]:
        value = self.values.get(name, [] if not required else None)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(name, "must be a column name or a list of column names")
        if required and not value:
            raise self.fail(name, "needs at least one column")
        return tuple(self.identifier(name, column) for column in value)


def _source(path: Path, name: str, values: Any) -> Source:
    """One source system; the settings' `source_kinds` and `source_kafka_formats` may
    override its `kind` and `kafka_format`."""
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: source '{name}' must be a mapping")
    conf = settings()
    overridden = _override("kind", conf.source_kinds, name) | _override(
        "kafka_format", conf.source_kafka_formats, name
    )
    reader = _Reader(path, f"source '{name}'", {**values, **overridden})
    include = reader.patterns("include")
    prefix = reader.values.get("topic_prefix", "")
    if include and not prefix:
        raise reader.fail("topic_prefix", "is required with include (the connector's topic.prefix)")
    return Source(
        name=name,
        connector=reader.choice("connector", CONNECTORS, ""),
        decimal_handling=reader.choice("decimal_handling", DECIMAL_MODES, "precise"),
        kind=reader.choice("kind", SOURCE_KINDS, "landing"),
        kafka_format=reader.choice("kafka_format", KAFKA_FORMATS, "json"),
        topic_prefix=reader.identifier("topic_prefix", prefix, TOPIC) if prefix else "",
        include=include,
        exclude=reader.patterns("exclude"),
        database_url_env=_env_name(reader, "database_url_env"),
    )


def _env_name(reader: _Reader, name: str) -> str:
    """An environment variable's name, when given."""
    value = reader.values.get(name, "")
    return reader.identifier(name, reader.text(name)) if value else ""


def _override(key: str, overrides: dict[str, str], name: str) -> dict[str, str]:
    return {key: overrides[name]} if name in overrides else {}


def _table(
    path: Path, name: str, values: Any, defaults: dict, sources: dict[str, Source]
) -> TableConfig:
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: table '{name}' must be a mapping")
    reader = _Reader(path, f"table '{name}'", {**defaults, **values})
    source_name = reader.text("source")
    if source_name not in sources:
        raise reader.fail("source", f"'{source_name}' is not declared under sources")
    source = sources[source_name]
    raw_columns = reader.values.get("columns") or {}
    if not isinstance(raw_columns, dict):
        raise reader.fail("columns", "must map column names to types")
    columns: dict[str, FieldType] = {}
    for column, type_name in raw_columns.items():
        reader.identifier(f"columns.{column}", str(column))
        try:
            columns[str(column)] = parse_config_type(str(type_name), source.decimal_handling)
        except UnknownTypeError as error:
            raise reader.fail(f"columns.{column}", str(error)) from error
    key = reader.names("key", required=True)
    partition_by = reader.names("partition_by", required=False)
    for column in (*key, *partition_by):
        if columns and column not in columns:
            raise reader.fail(
                "key" if column in key else "partition_by", f"unknown column '{column}'"
            )
    return TableConfig(
        name=reader.identifier("name", name),
        source=source,
        topic=reader.identifier("topic", reader.text("topic"), TOPIC),
        key=key,
        database=reader.identifier("database", reader.text("database")),
        ordering=reader.choice("ordering", ORDERINGS, "source_position"),
        partition_by=partition_by,
        table_type=reader.choice("table_type", TABLE_TYPES, "cow"),
        buckets=_buckets(reader, partition_by),
        delete_mode=reader.choice("delete_mode", DELETE_MODES, "soft"),
        truncate=reader.choice("truncate", TRUNCATE_MODES, "delete_all"),
        columns=columns,
    )


def _buckets(reader: _Reader, partition_by: tuple[str, ...]) -> int | None:
    """The bucket count; only for an unpartitioned table, as the bucket index is not global."""
    buckets = reader.count("buckets")
    if buckets is not None and partition_by:
        raise reader.fail(
            "buckets",
            "the bucket index finds a key only in its own partition, so a key whose "
            "partition changes would be kept twice: remove partition_by or buckets",
        )
    return buckets


@dataclass(frozen=True)
class TableDocument:
    """The table config as loaded: its listed tables, and what a found table is made of."""

    path: Path
    defaults: dict[str, Any]
    sources: dict[str, Source]
    tables: dict[str, TableConfig]

    def found_table(self, source: Source, name: str, topic: str, key: list[str]) -> TableConfig:
        """A table found from its topic, on the defaults, as if listed with these fields."""
        values = {"source": source.name, "topic": topic, "key": key}
        return _table(self.path, name, values, self.defaults, self.sources)


def load_document(path: Path = TABLES_FILE, database: str | None = None) -> TableDocument:
    """Read and validate the whole table config; fail fast on the first error.

    Tables without a `database` go to `database`, by default the settings'
    `bronze_database`.
    """
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"{path}: cannot read the table config: {error}") from error
    if not isinstance(document, dict) or not isinstance(document.get("tables"), dict):
        raise ConfigError(f"{path}: expected a mapping with a 'tables' section")
    defaults = {
        "database": database or settings().bronze_database,
        **(document.get("defaults") or {}),
    }
    sources = {name: _source(path, name, v) for name, v in (document.get("sources") or {}).items()}
    unknown = sorted(set(settings().source_kinds) - set(sources))
    if unknown:
        raise ConfigError(
            f"setting 'source_kinds' (conf/lakehouse.yml or LAKEHOUSE_SOURCE_KINDS) names "
            f"unknown source(s) {', '.join(unknown)}; known: {', '.join(sources)}"
        )
    tables = {
        str(name): _table(path, str(name), values, defaults, sources)
        for name, values in document["tables"].items()
    }
    topics = [t.topic for t in tables.values()]
    for table in tables.values():
        if topics.count(table.topic) > 1:
            raise ConfigError(f"{path}: table '{table.name}', field 'topic': used by two tables")
    return TableDocument(path, defaults, sources, tables)


def load_tables(path: Path = TABLES_FILE, database: str | None = None) -> dict[str, TableConfig]:
    """The tables listed in the config (found ones: ingestion/discovery.py)."""
    return load_document(path, database).tables


def select_tables(tables: dict[str, TableConfig], names: list[str] | None) -> list[TableConfig]:
    """The tables a run asked for (all when none), in config order."""
    if not names:
        return list(tables.values())
    unknown = [n for n in names if n not in tables]
    if unknown:
        raise ConfigError(f"unknown table(s): {', '.join(unknown)}; known: {', '.join(tables)}")
    return [tables[n] for n in names]
