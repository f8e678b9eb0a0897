"""The linters the project asks of every change: ruff, sqlfluff, YAML, whitespace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_pre_commit_passes_on_all_files() -> None:
    result = subprocess.run(
        [str(Path(sys.executable).with_name("pre-commit")), "run", "--all-files"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:]
