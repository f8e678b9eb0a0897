"""docs/modeling.md, run as written: every command of the analyst's recipes, in page order.

The commands are the page's ```bash lines, run one by one from the root of a
copy of the project (LAKEHOUSE_PROJECT_DIR: its models, conf and
dbt_project.yml copied, the rest linked) on the session stack, after the
daily job built the marts. The recipes' edits are the page's own SQL and
YAML blocks, pasted into the copy where the page says, before the section's
commands run: a recipe that no longer fits the model fails here. Each
command must exit 0; what the recipes promise is checked on what they made.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ingestion.settings import settings
from lakehouse import stack
from tests.guides import REPO, Block, code_blocks, command, project_copy

PAGE = REPO / "docs" / "modeling.md"
PROJECT = "tickit_lakehouse"
ADD_A_COLUMN = "Recipe: add a column to a mart and its contract"
UNIT_TEST = "Recipe: write a dbt unit test"
SLIM_CI = "Slim CI"
DIM_VENUES = Path("models/marts/sales/dim_venues.sql")
SALES_MODELS = Path("models/marts/sales/_sales__models.yml")


def blocks(section: str, language: str) -> list[Block]:
    return [b for b in code_blocks(PAGE, language) if b.section == section]


def stripped(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip()]


def paste_the_column(root: Path) -> None:
    """The page's select into dim_venues.sql (in place of the lines it extends), and
    its YAML after the model's last column."""
    sql, yml = blocks(ADD_A_COLUMN, "sql")[0], blocks(ADD_A_COLUMN, "yaml")[0]
    pasted = sql.lines
    before = [line for line in pasted if "is_large_venue" not in line]
    before[-2] = before[-2].rstrip(",")  # the column the new one follows, as it is now
    model = (root / DIM_VENUES).read_text().splitlines()
    start = next(i for i, line in enumerate(model) if line.strip() == before[0].strip())
    end = start + _span(model, start, len(before))
    assert stripped(model[start:end]) == stripped(before), "the page's select is not the model's"
    indent = model[start][: len(model[start]) - len(model[start].lstrip())]
    model[start:end] = [indent + line if line.strip() else "" for line in sql.text.splitlines()]
    (root / DIM_VENUES).write_text("\n".join(model) + "\n")
    models = (root / SALES_MODELS).read_text().splitlines()
    at = models.index("  - name: dim_venues")
    last = next(
        i for i in range(at + 1, len(models))
        if models[i].startswith("  - name:") or models[i][:1].isalpha()
    )  # fmt: skip
    while not models[last - 1].strip():
        last -= 1
    models[last:last] = yml.text.rstrip("\n").splitlines()
    (root / SALES_MODELS).write_text("\n".join(models) + "\n")


def _span(lines: list[str], start: int, count: int) -> int:
    """How many lines from `start` hold `count` non-blank lines."""
    seen = 0
    for offset, line in enumerate(lines[start:], 1):
        seen += bool(line.strip())
        if seen == count:
            return offset
    raise AssertionError("the model ends before the page's select does")


def paste_the_unit_test(root: Path) -> None:
    """The page's unit test appended to the file's `unit_tests:` list (its last key)."""
    (block,) = blocks(UNIT_TEST, "yaml")
    models = (root / SALES_MODELS).read_text()
    assert models.count("\nunit_tests:\n") == 1 and block.text.startswith("unit_tests:\n")
    (root / SALES_MODELS).write_text(models + block.text.removeprefix("unit_tests:\n"))


def place_the_prod_manifest(root: Path) -> None:
    """The daily job's manifest (the unchanged project) where the page's command looks."""
    state = root / "path" / "to" / "prod-manifest-dir"
    state.mkdir(parents=True)
    shutil.copy(Path(os.environ["LAKEHOUSE_DBT_TARGET_PATH"]) / "manifest.json", state)


EDITS: dict[str, Callable[[Path], None]] = {
    ADD_A_COLUMN: paste_the_column,
    UNIT_TEST: paste_the_unit_test,
    SLIM_CI: place_the_prod_manifest,
}


def run_results(root: Path) -> dict[str, str]:
    results = json.loads((root / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r["status"] for r in results}


def run_page(root: Path, env: dict[str, str]) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Every command of the page in order, each section's edits pasted first."""
    ran, edited = [], set()
    for block in code_blocks(PAGE, "bash"):
        if block.section in EDITS and block.section not in edited:
            EDITS[block.section](root)
            edited.add(block.section)
        for line in block.lines:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", line],
                cwd=root, env=env, capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            assert done.returncode == 0, (line, done.stdout[-3000:], done.stderr[-3000:])
            ran.append((command(line), done))
            check_after(line, root)
    return ran


def check_after(line: str, root: Path) -> None:
    """What a command promises that only holds right after it (slim CI, the served site)."""
    if "state:modified+" in line:
        models = {u for u in run_results(root) if u.startswith("model.")}
        assert models == {f"model.{PROJECT}.dim_venues"}, models
    if "test_type:unit" in line:
        unit = f"unit_test.{PROJECT}.dim_venues.test_dim_venues_flags_large_venues"
        assert run_results(root) == {unit: "pass"}
    if "docs serve" in line:
        address = f"http://127.0.0.1:{settings().docs_port}/"
        with urllib.request.urlopen(address + "manifest.json", timeout=10) as response:
            node = json.load(response)["nodes"][f"model.{PROJECT}.dim_venues"]
        assert "is_large_venue" in node["columns"]


def test_every_recipe_runs_as_written(daily_job, tmp_path: Path) -> None:
    assert daily_job.status == "success", daily_job
    root = project_copy(tmp_path / "project")
    env = {**os.environ, "LAKEHOUSE_PROJECT_DIR": str(root),
           "LAKEHOUSE_DBT_TARGET_PATH": str(root / "target")}  # fmt: skip
    ran = run_page(root, env)
    assert len(ran) == sum(len(b.lines) for b in code_blocks(PAGE, "bash")) > 15

    marts = settings().marts_schema
    venues = stack.query(f"select seat_capacity, is_large_venue from {marts}.dim_venues")
    assert venues and all(large == (seats >= 50000) for seats, large in venues)
    assert {large for _, large in venues} == {True, False}
    (shown,) = [done.stdout for line, done in ran if " show " in line]
    table = [line for line in shown.splitlines() if line.startswith("|")]
    assert len([line for line in table if not set(line) <= set("|- ")]) == 1 + 10  # header, rows
    # The page's staging model is the project's own, line for line.
    (staging,) = blocks("Recipe: add a source and a staging model", "sql")
    model = (REPO / "models/staging/tickit/stg_tickit__categories.sql").read_text()
    assert staging.text == model
