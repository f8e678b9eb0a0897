"""`_manifest.json`: what was generated, so tests can check what ingestion made of it.

Per topic: the table and its source (system, connector, database, schema,
source table), the key fields, the landing files by batch, events by op
(as landed, duplicates included) overall and by batch, tombstones,
duplicates and late events, the key set size, the expected final state's
file, row counts and checksum, and the schema change and truncate the topic
carries.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from lakehouse.cdc.generate.options import GenerateOptions
from lakehouse.cdc.generate.sink import LandedFile
from lakehouse.cdc.generate.tickit import LOYALTY_TIER, TABLES, USERS

MANIFEST_PATH = "_manifest.json"
MANIFEST_VERSION = 1
_OPS = ("r", "c", "u", "d", "t")


def expected_path(table: str) -> str:
    return f"_expected/{table}.jsonl"


def options_record(options: GenerateOptions) -> dict[str, Any]:
    """The options that shape the output (not where it went or how it was shown)."""
    record = asdict(options)
    record.pop("out")
    record.pop("show_progress")
    record["op_mix"] = str(options.op_mix)
    record["snapshot_day"] = options.snapshot_day.isoformat()
    return record


def build_manifest(
    options: GenerateOptions,
    files: dict[str, list[LandedFile]],
    expected: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The manifest document; `expected` holds per table: rows, deleted, checksum."""
    batches = [
        {
            "batch": number,
            "kind": "snapshot" if number == 0 else "changes",
            "day": (options.snapshot_day + timedelta(days=number)).isoformat(),
        }
        for number in range(options.change_batches + 1)
    ]
    topics = {
        table.topic: _topic_entry(options, table.name, files.get(table.topic, []), expected)
        for table in TABLES.values()
    }
    return {
        "manifest_version": MANIFEST_VERSION,
        "generator": "lakehouse cdc generate",
        "options": options_record(options),
        "batches": batches,
        "topics": topics,
    }


def _topic_entry(
    options: GenerateOptions, name: str, files: list[LandedFile], expected: dict[str, dict]
) -> dict[str, Any]:
    table = TABLES[name]
    by_batch: dict[str, list[str]] = {str(n): [] for n in range(options.change_batches + 1)}
    ops_by_batch: dict[str, Counter[str]] = {key: Counter() for key in by_batch}
    for landed in sorted(files, key=lambda f: (f.batch, f.partition, f.start_offset)):
        by_batch[str(landed.batch)].append(landed.path)
        ops_by_batch[str(landed.batch)].update(landed.ops)
    total: Counter[str] = Counter()
    for counts in ops_by_batch.values():
        total.update(counts)
    truncated = options.truncate_table == name and options.change_batches >= options.truncate_batch
    changed = table is USERS and options.change_batches >= options.schema_change_batch
    return {
        "table": name,
        "source_system": table.system.name,
        "connector": table.system.connector,
        "database": table.system.database,
        "schema": table.system.schema,
        "source_table": table.source_table,
        "key_fields": [table.key],
        "partitions": options.partitions,
        "files": by_batch,
        "events": {op: total[op] for op in _OPS},
        "events_by_batch": {
            batch: {op: counts[op] for op in _OPS} for batch, counts in ops_by_batch.items()
        },
        "tombstones": total["tombstone"],
        "duplicates": total["duplicate"],
        "late_events": total["late"],
        "records": sum(f.records for f in files),
        "bytes": sum(f.size for f in files),
        "keys": expected[name]["rows"],
        "expected": {"path": expected_path(name), **expected[name]},
        "schema_change": (
            {
                "batch": options.schema_change_batch,
                "column": LOYALTY_TIER.name,
                "type": LOYALTY_TIER.sql_type,
                "nullable": True,
            }
            if changed
            else None
        ),
        "truncate": (
            {"batch": options.truncate_batch, "delivered": total["t"] > 0} if truncated else None
        ),
    }


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
