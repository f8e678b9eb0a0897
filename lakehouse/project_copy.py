"""A copy of the project for a run that edits its files: those copied, the rest linked.

A run pointed at it (LAKEHOUSE_PROJECT_DIR) reads the copy's conf/, models
and dbt_project.yml, so a bench's extra tables or a guide's edits never touch
the repository; code, jars and the venv are the repository's own, linked.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from ingestion.settings import PROJECT_DIR

NOT_LINKED = ("target", "logs", ".git")  # a run's own output, and history


def project_copy(root: Path, copied: Iterable[str]) -> Path:
    """`root` holding copies of the `copied` top-level entries and links to the others."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    copied = set(copied)
    for entry in PROJECT_DIR.iterdir():
        if entry.name in copied:
            copy = shutil.copytree if entry.is_dir() else shutil.copy
            copy(entry, root / entry.name)
        elif entry.name not in NOT_LINKED:
            (root / entry.name).symlink_to(entry)
    return root
