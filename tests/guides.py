"""The guides' code blocks, read from the Markdown, and a copy of the project to run them in.

A guide's commands run as written only when the tests take them from the
page itself: a command edited on the page is the command the suite runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from lakehouse.project_copy import project_copy as copy_of_the_project

REPO = Path(__file__).resolve().parents[1]
COPIED = ("conf", "models", "dbt_project.yml")  # what the guides' commands edit or generate


@dataclass(frozen=True)
class Block:
    """One fenced code block: the heading it sits under, its language and its text."""

    section: str
    language: str
    text: str

    @property
    def lines(self) -> list[str]:
        return [line for line in self.text.splitlines() if line.strip()]


def code_blocks(page: Path, *languages: str) -> list[Block]:
    """The page's fenced blocks in these languages, in page order (list indentation removed)."""
    blocks, section = [], ""
    tokens = MarkdownIt("commonmark").parse(page.read_text())
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            section = tokens[index + 1].content
        elif token.type == "fence" and token.info.strip() in languages:
            blocks.append(Block(section, token.info.strip(), token.content))
    return blocks


def project_copy(root: Path) -> Path:
    """The files a guide edits or generates, copied; the rest of the repository linked."""
    return copy_of_the_project(root, COPIED)


# The guides whose every shell command the suite runs as written, and the test
# module that runs each section's; tests/docs/test_markdown_pages.py checks that
# no section with commands is left without one.
RUN_BY = {
    ("getting-started.md", "Two commands"): "tests/make_run.py",
    ("getting-started.md", "The local stack"): "tests/ingestion/test_stack.py",
    ("getting-started.md", "Development"): "tests/test_lint.py",
    ("modeling.md", ""): "tests/docs/test_modeling_recipes.py",
    ("own-tables.md", ""): "tests/cdc/test_own_table_guide.py",
}
# Commands the suite cannot run inside itself, and what runs them instead.
NOT_RUN = {
    "make test": "CI runs it (.ci/run)",
    "make test TEST_WORKERS=0": "the whole suite again, in one process",
}


def command(line: str) -> str:
    """A shell line without its trailing comment."""
    return line.split("  #")[0].split(" # ")[0].strip()


def runnable(block: Block) -> list[str]:
    """The block's lines the suite runs: all but NOT_RUN's."""
    return [line for line in block.lines if command(line) not in NOT_RUN]
