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
`<table>_changelog` tables stay declared when the file declares them.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import yaml

from ingestion.config import TableConfig, load_tables
from ingestion.decode.events import CDC_COLUMNS
from ingestion.errors import UserError
from ingestion.settings import PROJECT_DIR

SOURCES_FILE = PROJECT_DIR / "models" / "staging" / "tickit" / "_tickit__sources.yml"
# Hudi's meta columns, first in every Hudi table.
HOODIE_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
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


class SourcesError(UserError):
    """The sources file cannot be generated; the message says what to fix."""


def render(text: str, tables: dict[str, TableConfig]) -> str:
    """The sources file `text` with its `sources:` section generated from `tables`."""
    head, marker, _ = text.partition("\nsources:\n")
    if not marker:
        raise SourcesError("the sources file has no top-level `sources:` section")
    document = yaml.safe_load(text)
    anchors = _anchors(head, document.get("anchors") or [])
    (source,) = document["sources"]
    existing = {table["name"]: table for table in source.get("tables") or []}
    generated = []
    for table in tables.values():
        generated.append(_table(table, table.name, table.key, existing, anchors))
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
    entry["columns"] = _columns(table, entry.get("columns") or [], anchors, key)
    return _ordered(entry, TABLE_ORDER)


def _with_combination_test(tests: list[Any], key: tuple[str, ...]) -> list[Any]:
    """The table's tests with one that the composite record key is unique."""
    wanted = {"unique_combination_of_columns": {"arguments": {"combination_of_columns": list(key)}}}
    return tests if wanted in tests else [wanted, *tests]


def _columns(
    table: TableConfig, existing: list[dict], anchors: dict[str, Any], key: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Key (when not a config column), config columns, evolved columns, then Hudi and CDC."""
    by_name = {column["name"]: column for column in existing}
    typed = {name: field.spark_type for name, field in table.columns.items()}
    names = [k for k in key if k not in typed] + list(typed)
    columns = [_column(name, typed.get(name), by_name.get(name), key) for name in names]
    columns += [
        column
        for column in existing
        if column["name"] not in typed and (column.get("config") or {}).get("meta", {}).get(EVOLVED)
    ]
    shared = {value["name"]: value for value in anchors.values() if "name" in value}
    for name in (*HOODIE_COLUMNS, *CDC_COLUMNS):
        if name not in shared:
            raise SourcesError(f"describe the bronze column `{name}` in the anchors section")
        columns.append(shared[name])
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


def write(path: Path = SOURCES_FILE, check: bool = False) -> bool:
    """Regenerate the sources file; with `check`, only report. True when it was up to date."""
    current = path.read_text()
    wanted = render(current, load_tables())
    if wanted == current:
        return True
    if not check:
        path.write_text(wanted)
    return False
