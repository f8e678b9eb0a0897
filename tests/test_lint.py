"""The linters the project asks of every change, and the Development commands of the guide.

docs/getting-started.md's Development block runs as written from the
repository root: `make lint` (pre-commit: ruff, sqlfluff, YAML, whitespace)
must pass on every file, and running one module of the suite must pass too.
"""

from __future__ import annotations

import subprocess

from tests.guides import REPO, code_blocks, command, runnable

PAGE = REPO / "docs" / "getting-started.md"


def test_the_development_commands_run_as_written() -> None:
    (block,) = [b for b in code_blocks(PAGE, "bash") if b.section == "Development"]
    lines = runnable(block)
    assert [command(line) for line in lines][:2] == [
        "make lint", ".venv/bin/pytest tests/platform/test_output.py"
    ]  # fmt: skip
    for line in lines:
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", line],
            cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert result.returncode == 0, (line, result.stdout[-4000:], result.stderr[-2000:])
