"""`lakehouse tables add`: a conf/tables.yml entry written from the source database's catalog.

The entry names the source, the topic the connector publishes the table to
(`<topic.prefix>.<schema or database>.<table>`, as conf/cdc/*.connector.json
says), the primary key and every column with the config's type for what
Debezium emits (lakehouse/cdc/catalog.py). Written to the file, it is
appended as text, so the file's comments stay, and the result is validated
as `lakehouse ingest` would load it before it replaces the file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ingestion.config import TABLES_FILE, load_tables
from ingestion.errors import UserError
from ingestion.settings import IDENTIFIER, Settings
from lakehouse.cdc import catalog, connectors
from lakehouse.cdc.catalog import CatalogTable, ConnectorModes
from lakehouse.cdc.connectors import CONNECTOR_FILES

DIALECTS = {"PostgresConnector": catalog.POSTGRES, "MariaDbConnector": catalog.MARIADB}


@dataclass(frozen=True)
class TableEntry:
    """One table of conf/tables.yml, as the command writes it."""

    name: str
    source: str
    topic: str
    key: tuple[str, ...]
    columns: dict[str, str]


@dataclass(frozen=True)
class AddedTable:
    """What `tables add` made: the entry, its YAML text, warnings, and where it was written."""

    entry: TableEntry
    text: str
    warnings: tuple[str, ...]
    written: Path | None = None


def connector_modes(conf: Settings, source: str, folder: Path = CONNECTOR_FILES) -> ConnectorModes:
    """The modes of the chain's connector of `source` (conf/cdc/<source>-*.connector.json).

    Its config as registered: placeholders filled, among them the boolean
    columns that conf/tables.yml declares.
    """
    found = sorted(folder.glob(f"{source}-*.connector.json"))
    if not found:
        raise UserError(
            f"source '{source}' has no connector in {folder} (the live chain's sources: "
            "ems, ecomm): write the table's entry in conf/tables.yml by hand"
        )
    config = connectors.connector_configs(conf)[json.loads(found[0].read_text())["name"]]
    kind = config["connector.class"].rsplit(".", 1)[-1]
    if kind not in DIALECTS:
        raise UserError(f"{found[0]}: connector {kind} has no catalog reader (PostgreSQL, MariaDB)")
    return ConnectorModes.of(DIALECTS[kind], config)


def read_table(conf: Settings, source: str, name: str, modes: ConnectorModes) -> CatalogTable:
    """The source table `name` (`schema.table`, or `table` in the connector's first schema)."""
    schema, _, table = name.rpartition(".")
    schema = schema or (modes.captured[0] if modes.captured else "")
    if not schema or not table:
        raise UserError(f"--table {name!r}: give it as SCHEMA.TABLE (database.table for MariaDB)")
    if modes.dialect == catalog.POSTGRES:
        return catalog.read_postgres(conf, source, schema, table)
    return catalog.read_mariadb(conf, source, schema, table)


def _identifier(value: str, what: str, fix: str) -> str:
    if not IDENTIFIER.fullmatch(value):
        raise UserError(f"{what} {value!r} is not a plain name (letters, digits, _): {fix}")
    return value


def build_entry(
    table: CatalogTable, modes: ConnectorModes, name: str | None, key: tuple[str, ...] = ()
) -> tuple[TableEntry, list[str]]:
    """The entry of `table`, and a warning per thing a person should know or fix."""
    bronze = _identifier(name or table.table, "bronze table name", "pass --name NAME")
    key = key or table.key
    if not key:
        raise UserError(
            f"{table.qualified} has no primary key: add one (ALTER TABLE {table.qualified} "
            "ADD PRIMARY KEY (...)) or declare the columns that identify a row by hand "
            "with --key COLUMN[,COLUMN] (written as the entry's `key:`)"
        )
    warnings: list[str] = []
    columns: dict[str, str] = {}
    for column in table.columns:
        _identifier(column.name, f"{table.qualified}: column", "rename it in the source")
        mapped = catalog.config_type(column, modes, table.qualified)
        if mapped is None:
            warnings.append(
                f"{table.qualified}.{column.name}: type {column.base} has no config type; left "
                "out (bronze takes its type from the events)"
            )
        else:
            columns[column.name] = mapped
        if mapped == "int16" and column.column_type.startswith("tinyint(1)"):
            warnings.append(
                f"{table.qualified}.{column.name} is TINYINT(1), written as int16: if it holds "
                "booleans, make it `boolean` in the entry and run `lakehouse cdc up` (the "
                "connector converts the columns the config declares boolean)"
            )
    unknown = [k for k in key if k not in columns]
    if unknown:
        raise UserError(f"--key: {table.qualified} has no (mapped) column {', '.join(unknown)}")
    warnings += _capture_warnings(table, modes)
    topic = f"{modes.topic_prefix}.{table.schema}.{table.table}"
    return TableEntry(bronze, table.source, topic, key, columns), warnings


def _capture_warnings(table: CatalogTable, modes: ConnectorModes) -> list[str]:
    """The replica identity advice (PostgreSQL), and a schema the connector does not read."""
    warnings = []
    if table.dialect == catalog.POSTGRES and table.replica_identity != "full":
        warnings.append(
            f"{table.qualified} has REPLICA IDENTITY {str(table.replica_identity).upper()}: "
            f"run `ALTER TABLE {table.qualified} REPLICA IDENTITY FULL;` so that updates and "
            "deletes carry whole before-images and unchanged TOAST values (long text, jsonb) "
            "arrive, not a placeholder"
        )
    if modes.captured and table.schema not in modes.captured:
        warnings.append(
            f"the {table.source} connector captures {', '.join(modes.captured)} only, not "
            f"{table.schema}: create the table there or widen its include list in conf/cdc/"
        )
    return warnings


def _key_text(text: str) -> str:
    """A YAML key or value, quoted when YAML would read it as something else."""
    plain = yaml.safe_load(f"{text}: x") == {text: "x"} and text.strip() == text
    return text if plain else json.dumps(text)


def render(entry: TableEntry) -> str:
    """The entry in conf/tables.yml's own style, indented under `tables:`."""
    lines = [
        f"  {entry.name}:",
        f"    source: {entry.source}",
        f"    topic: {entry.topic}",
        f"    key: [{', '.join(entry.key)}]",
        "    columns:",
        *(f"      {_key_text(name)}: {kind}" for name, kind in entry.columns.items()),
    ]
    return "\n".join(lines) + "\n"


def _refuse_existing(text: str, entry: TableEntry, path: Path) -> None:
    tables = (yaml.safe_load(text) or {}).get("tables") or {}
    if entry.name in tables:
        raise UserError(
            f"{path}: table '{entry.name}' already exists: edit it there, or pass --name "
            "for another bronze name"
        )
    for name, values in tables.items():
        if isinstance(values, dict) and values.get("topic") == entry.topic:
            raise UserError(f"{path}: table '{name}' already reads topic {entry.topic}")


def append(entry: TableEntry, text: str, path: Path = TABLES_FILE) -> None:
    """Append the entry's text to the file, validated first as `lakehouse ingest` loads it."""
    current = path.read_text()
    _refuse_existing(current, entry, path)
    wanted = current.rstrip("\n") + "\n\n" + text
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tables-", suffix=".yml")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(wanted)
        if entry.name not in load_tables(Path(temporary)):
            raise UserError(f"{path}: its last section is not `tables:`; add the entry by hand")
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def add_table(
    conf: Settings,
    source: str,
    table: str,
    name: str | None = None,
    key: tuple[str, ...] = (),
    write_to: Path | None = None,
) -> AddedTable:
    """Read the table's catalog, build its entry, and append it to `write_to` when given."""
    modes = connector_modes(conf, source)
    found = read_table(conf, source, table, modes)
    entry, warnings = build_entry(found, modes, name, key)
    text = render(entry)
    if write_to is not None:
        append(entry, text, write_to)
    return AddedTable(entry, text, tuple(warnings), write_to)


@dataclass(frozen=True)
class Selection:
    """What `tables add --include` did: the tables added, and those left out with why."""

    added: tuple[AddedTable, ...]
    left_out: tuple[str, ...]  # one line each: the table, the reason, the fix


def matching(names: list[str], include: tuple[str, ...], exclude: tuple[str, ...]) -> list[str]:
    """The names one of `include` matches and none of `exclude`, as Debezium selects tables.

    Debezium's table.include.list and table.exclude.list are regular
    expressions matched against the whole `schema.table`, case-insensitively.
    """

    def compiled(patterns: tuple[str, ...]) -> list[re.Pattern[str]]:
        try:
            return [re.compile(p, re.IGNORECASE) for p in patterns]
        except re.error as error:
            raise UserError(f"pattern {error.pattern!r}: {error}") from None

    kept, dropped = compiled(include), compiled(exclude)
    return [
        name
        for name in names
        if any(p.fullmatch(name) for p in kept) and not any(p.fullmatch(name) for p in dropped)
    ]


def _left_out(table: CatalogTable, entry_names: dict[str, str]) -> str | None:
    """Why a matched table gets no entry (None: it gets one)."""
    if not table.key:
        return (
            f"{table.qualified}: no primary key, so no row can be told apart; add one (ALTER "
            f"TABLE {table.qualified} ADD PRIMARY KEY (...)) and run this again, or add it "
            f"alone with `lakehouse tables add --table {table.qualified} --key COLUMN[,COLUMN]`"
        )
    if table.table in entry_names:
        return (
            f"{table.qualified}: bronze table name '{table.table}' is taken by "
            f"{entry_names[table.table]}; add it alone with --table and --name NAME"
        )
    return None


def add_tables(
    conf: Settings,
    source: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...] = (),
    write_to: Path | None = None,
) -> Selection:
    """An entry for every table the patterns select that conf/tables.yml does not hold yet."""
    modes = connector_modes(conf, source)
    configured = load_tables(write_to or TABLES_FILE)
    topics = {t.topic for t in configured.values()}
    names = {t.name: t.topic for t in configured.values()}
    added: list[AddedTable] = []
    left_out: list[str] = []
    for name in matching(catalog.list_tables(conf, modes.dialect), include, exclude):
        if f"{modes.topic_prefix}.{name}" in topics:
            continue  # already configured: the file's entry wins
        table = read_table(conf, source, name, modes)
        if (reason := _left_out(table, names)) is not None:
            left_out.append(reason)
            continue
        entry, warnings = build_entry(table, modes, None)
        text = render(entry)
        if write_to is not None:
            append(entry, text, write_to)
        names[entry.name] = entry.topic
        added.append(AddedTable(entry, text, tuple(warnings), write_to))
    return Selection(tuple(added), tuple(left_out))
