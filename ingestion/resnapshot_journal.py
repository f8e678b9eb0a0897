"""The record a rebuild from a fresh snapshot keeps while a table has no commit of its own.

`lakehouse resnapshot` (resnapshot.py) moves a table's bronze and changelog
aside and starts new ones. Until the new ones commit, their checkpoint is the
replaced tables': without it a run would read the topic again from its start,
and the events the rebuilt table must never see (those before the narrowing
it follows) would come back. This file, one per table in the project home
beside the writer locks, carries that checkpoint and says where the replaced
tables went; planning (plan.py) reads it for a table that does not exist. A
rebuild from landing files the user gave must commit those first: until it
has, a run refuses the table and names the command that finishes it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ingestion.checkpoint import Checkpoint
from ingestion.config import TableConfig
from ingestion.settings import Settings


@dataclass(frozen=True)
class Replaced:
    """A table being rebuilt: the checkpoint its new tables start from, where the old went."""

    checkpoint: Checkpoint
    kept: dict[str, str]  # the replaced tables' paths: "bronze" and "changelog"
    started_at: str
    snapshot_folder: str | None = None  # landing files: the snapshot's, given by the user

    def to_json(self) -> str:
        return json.dumps(
            {
                "checkpoint": json.loads(self.checkpoint.to_json()),
                "kept": self.kept,
                "started_at": self.started_at,
                "snapshot_folder": self.snapshot_folder,
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> Replaced:
        data = json.loads(text)
        return cls(
            Checkpoint.from_json(json.dumps(data["checkpoint"])),
            dict(data["kept"]),
            data["started_at"],
            data.get("snapshot_folder"),
        )


def journal_path(conf: Settings, table: TableConfig) -> Path:
    return conf.home / "resnapshot" / f"{table.database}.{table.name}.json"


def replaced(conf: Settings, table: TableConfig) -> Replaced | None:
    """The table's rebuild record, or None when no rebuild is under way (one stat)."""
    path = journal_path(conf, table)
    return Replaced.from_json(path.read_text()) if path.exists() else None


def write_journal(conf: Settings, table: TableConfig, record: Replaced) -> None:
    """Written whole or not at all (a rename), before anything is moved."""
    path = journal_path(conf, table)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(record.to_json())
    os.replace(partial, path)


def clear_journal(conf: Settings, table: TableConfig) -> None:
    journal_path(conf, table).unlink(missing_ok=True)
