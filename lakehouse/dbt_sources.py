"""The dbt sources of the bronze tables, generated from conf/tables.yml.

conf/tables.yml is the one table config: which tables exist, their record
keys and their columns with types. `lakehouse dbt-sources` rewrites the
`sources:` section of models/staging/tickit/_tickit__sources.yml from it and
keeps what only a person can write: descriptions, tests, freshness, and the
YAML anchors above the section (the CDC columns every table shares). The test
suite renders the file again and fails when the result differs, so the
sources cannot drift from the config.

Per table the generator writes the name, `config.meta` (topic, source system and
its connector, record key), the columns in config order with their bronze (Spark) types, a
`unique` and `not_null` test on a one-column key, then the columns bronze
gains mid-stream (marked `schema_evolution` in their meta, as they are not in
the config) and Hudi's and ingestion's own columns, taken from the anchors.
The evolved columns are those the file declares and those the bronze table
really holds beyond the config (an `ALTER TABLE ... ADD COLUMN` at the
source), read from the schema of the table's newest Hudi commit: a column
bronze gained reaches dbt without anyone writing it down, and `--check`
names it when the file lacks it.
`<table>_changelog` tables stay declared when the file declares them.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ingestion.config import TableConfig
from ingestion.decode.events import CDC_COLUMNS
from ingestion.decode.types import FieldType, from_spark_type, widen
from ingestion.discovery import served_tables
from ingestion.errors import UserError
from ingestion.hudi_timeline import META_FOLDER, TABLE_PROPERTIES
from ingestion.paths import table_path, to_local_path
from ingestion.settings import PROJECT_DIR, Settings, settings

SOURCES_FILE = PROJECT_DIR / "models" / "staging" / "tickit" / "_tickit__sources.yml"
# Hudi's meta columns, first in every Hudi table.
HOODIE_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
# Hudi's and ingestion's own columns: described by the anchors, never taken from bronze.
INTERNAL_PREFIXES = ("_hoodie_", "_cdc_")
# The record key of every changelog table (ingestion/hudi_writer.py).
CHANGELOG_KEY = "_cdc_event_id"
SCHEMA = "{{ env_var('LAKEHOUSE_BRONZE_DATABASE') }}"
EVOLVED = "schema_evolution"
KEY_TESTS = ("unique", "not_null")
TABLE_ORDER = ("name", "description", "config", "data_tests", "columns")
COLUMN_ORDER = ("name", "data_type", "description", "data_tests")
WIDTH = 80
# Mappings of more keys, or with quoted values, are blocks, like the hand-written ones.
FLOW_KEYS = 2
ANCHOR_RE = re.compile(r"^  - &(\S+)\s*$", re.MULTILINE)


# Bronze table -> its columns and Spark types, as the table on disk holds them.
BronzeColumns = Mapping[str, Mapping[str, str]]


class SourcesError(UserError):
    """The sources file cannot be generated; the message says what to fix."""


@dataclass(frozen=True)
class SourcesCheck:
    """Whether the sources file is what the config and bronze make, and what bronze adds."""

    up_to_date: bool
    missing: tuple[str, ...]  # `table.column`: held by bronze, not declared by the file


def render(text: str, tables: dict[str, TableConfig], bronze: BronzeColumns | None = None) -> str:
    """The sources file `text` with its `sources:` section generated from `tables` and `bronze`."""
    head, marker, _ = text.partition("\nsources:\n")
    if not marker:
        raise SourcesError("the sources file has no top-level `sources:` section")
    document = yaml.safe_load(text)
    anchors = _anchors(head, document.get("anchors") or [])
    (source,) = document["sources"]
    existing = {table["name"]: table for table in source.get("tables") or []}
    generated = []
    for table in tables.values():
        held = (bronze or {}).get(table.name) or {}
        generated.append(_table(table, table.name, table.key, existing, anchors, held))
        if table.changelog_name in existing:
            changelog = (CHANGELOG_KEY,)
            generated.append(_table(table, table.changelog_name, changelog, existing, anchors))
    source = {**source, "schema": SCHEMA, "tables": generated}
    lines = _block([source], 2, anchors, spaced=False)
    return head + marker + "\n".join(lines) + "\n"


def _anchors(head: str, values: list[Any]) -> dict[str, Any]:
    """The anchors section: anchor name -> value (in the order they are written)."""
    names = ANCHOR_RE.findall(head)
    if len(names) != len(values):
        raise SourcesError("every item of `anchors:` needs its own anchor (`- &name`)")
    return dict(zip(names, values, strict=True))


def _ordered(entry: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """The entry with its keys in the file's usual order, so a regeneration reads like the rest."""
    first = {key: entry[key] for key in order if key in entry}
    return {**first, **{key: value for key, value in entry.items() if key not in first}}


def _table(
    table: TableConfig,
    name: str,
    key: tuple[str, ...],
    existing: dict[str, dict],
    anchors: dict[str, Any],
    held: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Source table `name` (the table or its changelog): what is written by hand is kept."""
    entry = dict(existing.get(name) or {"description": f"Bronze table `{name}`."})
    entry["name"] = name
    config = dict(entry.get("config") or {})
    config["meta"] = {
        **(config.get("meta") or {}),
        "topic": table.topic,
        "source_system": table.source.name,
        "connector": table.source.connector,
        "record_key": list(key),
    }
    entry["config"] = config
    if len(key) > 1:
        entry["data_tests"] = _with_combination_test(entry.get("data_tests") or [], key)
    entry["columns"] = _columns(table, entry.get("columns") or [], anchors, key, held or {})
    return _ordered(entry, TABLE_ORDER)


def _with_combination_test(tests: list[Any], key: tuple[str, ...]) -> list[Any]:
    """The table's tests with one that the composite record key is unique."""
    wanted = {"unique_combination_of_columns": {"arguments": {"combination_of_columns": list(key)}}}
    return tests if wanted in tests else [wanted, *tests]


def _columns(
    table: TableConfig,
    existing: list[dict],
    anchors: dict[str, Any],
    key: tuple[str, ...],
    held: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Key (when not a config column), config columns, evolved columns, then Hudi and CDC.

    A key outside the config (a table found by pattern lists none) takes bronze's type.
    """
    by_name = {column["name"]: column for column in existing}
    typed = {
        name: _bronze_or_config(field, held.get(name)) for name, field in table.columns.items()
    }
    names = [k for k in key if k not in typed] + list(typed)
    columns = [
        _column(name, typed.get(name) or held.get(name), by_name.get(name), key) for name in names
    ]
    columns += _evolved(existing, set(names), held)
    shared = {value["name"]: value for value in anchors.values() if "name" in value}
    for name in (*HOODIE_COLUMNS, *CDC_COLUMNS):
        if name not in shared:
            raise SourcesError(f"describe the bronze column `{name}` in the anchors section")
        columns.append(shared[name])
    return columns


def _bronze_or_config(declared: FieldType, held: str | None) -> str:
    """A config column's type: bronze's when the source widened it there (int -> bigint)."""
    wider = widen(declared, from_spark_type(held)) if held else None
    return (wider or declared).spark_type


def _evolved(
    existing: list[dict], configured: set[str], held: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The columns beyond the config: declared as evolved in the file, then new in bronze.

    A declared one takes bronze's type when bronze holds it; one only bronze
    holds gets an empty description, as a new config column does.
    """
    own = set(HOODIE_COLUMNS) | set(CDC_COLUMNS) | configured
    columns = []
    for column in existing:
        if column["name"] not in own and (column.get("config") or {}).get("meta", {}).get(EVOLVED):
            kind = held.get(column["name"])
            columns.append(
                _ordered({**column, "data_type": kind}, COLUMN_ORDER) if kind else column
            )
    declared = own | {column["name"] for column in columns}
    for name, kind in held.items():
        if name not in declared and not name.startswith(INTERNAL_PREFIXES):
            meta = {"config": {"meta": {EVOLVED: True}}}
            columns.append({"name": name, "data_type": kind, "description": "", **meta})
    return columns


def _column(
    name: str, data_type: str | None, existing: dict | None, key: tuple[str, ...]
) -> dict[str, Any]:
    """One configured column: its hand-written entry with the config's type and key tests.

    A new column gets an empty description, which the generated file shows
    plainly and the drift test's description check reports.
    """
    column = dict(existing or {"name": name, "description": ""})
    if data_type:
        column["data_type"] = data_type
    if key == (name,):
        tests = list(column.get("data_tests") or [])
        column["data_tests"] = [t for t in KEY_TESTS if t not in tests] + tests
    return _ordered(column, COLUMN_ORDER)


# A small YAML emitter in the file's own style: block mappings and lists,
# short collections of scalars in flow style, long text folded, anchors' values
# written as aliases. PyYAML's dumper can do none of the last three.


def _block(value: Any, indent: int, anchors: dict[str, Any], spaced: bool) -> list[str]:
    """A mapping or list as block lines; list items equal to an anchor become its alias."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            lines += _entry(f"{pad}{key}:", item, indent, anchors, spaced=key == "tables")
        return lines
    for number, item in enumerate(value):
        if spaced and number:
            lines.append("")
        alias = next((name for name, anchor in anchors.items() if anchor == item), None)
        if alias:
            lines.append(f"{pad}- *{alias}")
        elif isinstance(item, dict) and _flow(item) is None:
            nested = _block(item, indent + 2, anchors, spaced=False)
            lines += [f"{pad}- {nested[0].lstrip()}", *nested[1:]]
        else:
            lines += _entry(f"{pad}-", item, indent, anchors, spaced=False)
    return lines


def _entry(prefix: str, item: Any, indent: int, anchors: dict[str, Any], spaced: bool) -> list[str]:
    """`prefix` (a key or a list dash) followed by its value, inline or as a block."""
    if isinstance(item, dict | list):
        flow = _flow(item)
        if flow is not None and len(prefix) + 1 + len(flow) <= WIDTH:
            return [f"{prefix} {flow}"]
        return [prefix, *_block(item, indent + 2, anchors, spaced)]
    text = _scalar(item, flow=False)
    if isinstance(item, str) and (len(prefix) + 1 + len(text) > WIDTH or "\n" in item.rstrip()):
        folded = _folded(item, indent + 2)
        if folded:
            return [f"{prefix} {folded[0]}", *folded[1:]]
    return [f"{prefix} {text}"]


def _flow(item: dict | list) -> str | None:
    """The collection in flow style when it holds scalars only, else None."""
    values = list(item.values()) if isinstance(item, dict) else item
    if any(isinstance(value, dict | list) for value in values):
        return None
    if isinstance(item, dict):
        pairs = [(key, _scalar(value, flow=True)) for key, value in item.items()]
        if len(item) > FLOW_KEYS or any(text.startswith('"') for _, text in pairs):
            return None
        return "{" + ", ".join(f"{key}: {text}" for key, text in pairs) + "}"
    return "[" + ", ".join(_scalar(value, flow=True) for value in item) + "]"


def _scalar(value: Any, flow: bool) -> str:
    """A scalar, plain when YAML reads it back unchanged, else double-quoted (dbt's Jinja)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    special = ",[]{}" if flow else ""
    plain = (
        text
        and "{{" not in text
        and not any(mark in text for mark in (": ", " #", "'", '"', "\n", *special))
        and not text.startswith(("-", "?", ":", "&", "*", "!", "|", ">", "%", "@", "`", "#"))
        and text == text.strip()
        and yaml.safe_load(text) == text
    )
    return text if plain else json.dumps(text)


def _folded(text: str, indent: int) -> list[str] | None:
    """A folded block scalar (`>`, or `>-` without a final newline) that loads back as `text`."""
    body = text[:-1] if text.endswith("\n") else text
    if "\n" in body or "  " in body or body != body.strip() or not body:
        return None
    lines = textwrap.wrap(
        body, width=WIDTH - indent, break_long_words=False, break_on_hyphens=False
    )
    return [">" if text.endswith("\n") else ">-", *(" " * indent + line for line in lines)]


def bronze_columns(tables: dict[str, TableConfig], conf: Settings | None = None) -> BronzeColumns:
    """Each bronze table's columns from its newest commit's schema (no table: left out).

    Spark starts (for Hudi's meta client) only when a table is there, or may
    be (a lake that is not a local folder); tables on a local disk that do
    not exist cost nothing.
    """
    conf = conf or settings()
    paths = {name: table_path(conf, t.database, t.name) for name, t in tables.items()}
    present = {name: path for name, path in paths.items() if _may_exist(path)}
    if not present:
        return {}
    from ingestion.spark import build_session
    from ingestion.table_state import read_state

    spark = build_session("lakehouse-dbt-sources", conf)
    found: dict[str, dict[str, str]] = {}
    for name, path in present.items():
        state = read_state(spark, path, tables[name].topic)
        if state.schema is not None:
            found[name] = {f.name: f.dataType.simpleString() for f in state.schema.fields}
    return found


def _may_exist(path: str) -> bool:
    local = to_local_path(path)
    return local is None or (local / META_FOLDER / TABLE_PROPERTIES).exists()


def missing_columns(text: str, bronze: BronzeColumns) -> tuple[str, ...]:
    """`table.column` for every column bronze holds that the sources file `text` lacks."""
    (source,) = yaml.safe_load(text)["sources"]
    declared = {
        table["name"]: {column["name"] for column in table.get("columns") or []}
        for table in source.get("tables") or []
    }
    return tuple(
        f"{table}.{column}"
        for table, columns in bronze.items()
        for column in columns
        if column not in declared.get(table, set()) and not column.startswith(INTERNAL_PREFIXES)
    )


def check(path: Path = SOURCES_FILE, bronze: BronzeColumns | None = None) -> SourcesCheck:
    """Whether the file is what the config and bronze generate, and the columns it lacks."""
    tables = served_tables().tables
    bronze = bronze_columns(tables) if bronze is None else bronze
    current = path.read_text()
    up_to_date = render(current, tables, bronze) == current
    return SourcesCheck(up_to_date, missing_columns(current, bronze))


def write(
    path: Path = SOURCES_FILE, check: bool = False, bronze: BronzeColumns | None = None
) -> bool:
    """Regenerate the sources file; with `check`, only report. True when it was up to date."""
    tables = served_tables().tables
    bronze = bronze_columns(tables) if bronze is None else bronze
    current = path.read_text()
    wanted = render(current, tables, bronze)
    if wanted == current:
        return True
    if not check:
        path.write_text(wanted)
    return False
