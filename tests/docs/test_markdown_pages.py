"""The Markdown pages stay a manual: a short front door, no history, no broken links.

The README is the front door and the pages under docs/ are the manual: both
say what is true now, so dates, commit hashes and issue numbers belong only
in CHANGELOG.md and the decision records (docs/decisions/). Every relative
link, and its #anchor, must reach a file and a heading that exist, or a page
moved today breaks a reader's path tomorrow. Pure Python: no Spark, no stack.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.guides import RUN_BY, code_blocks, runnable

REPO = Path(__file__).resolve().parents[2]
README_MAX_LINES = 300
HISTORY_ALLOWED = (REPO / "docs" / "decisions",)

ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
# A commit hash: 7 to 40 hex digits holding both a digit and a letter, as a word.
HEX_WORD = re.compile(r"(?<![0-9A-Za-z_])[0-9a-f]{7,40}(?![0-9A-Za-z_])")
ISO_DATE = re.compile(r"(?<!\d)20\d\d-[01]\d-[0-3]\d(?!\d)")
MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
NAMED_DATE = re.compile(
    rf"\b(?:\d{{1,2}}\s+(?:{MONTHS})\s+20\d\d|(?:{MONTHS})\s+\d{{1,2}},?\s+20\d\d)\b",
    re.IGNORECASE,
)

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def linked_pages() -> list[Path]:
    """Every page whose links must resolve: the README, docs/, the code maps."""
    pages = [REPO / "README.md", REPO / "ingestion" / "README.md", REPO / "lakehouse" / "README.md"]
    return [page for page in pages if page.exists()] + sorted((REPO / "docs").rglob("*.md"))


def current_pages() -> list[Path]:
    """The pages that state current facts only: all but the decision records."""
    return [
        page
        for page in linked_pages()
        if not any(page.is_relative_to(folder) for folder in HISTORY_ALLOWED)
    ]


def tokens(text: str) -> Iterator[Token]:
    """Every token of a page, the inline ones' children included, in order."""
    for token in PARSER.parse(text):
        yield token
        yield from token.children or ()


def prose(text: str) -> str:
    """The page's text outside code: fences, indented blocks and backticks dropped."""
    return "\n".join(token.content for token in tokens(text) if token.type == "text")


def history_marks(text: str) -> list[str]:
    """Issue numbers, commit hashes (code included) and calendar dates (prose only)."""
    found = ISSUE.findall(text)
    found += [
        word
        for word in HEX_WORD.findall(text)
        if re.search(r"\d", word) and re.search(r"[a-f]", word)
    ]
    outside_code = prose(text)
    return found + ISO_DATE.findall(outside_code) + NAMED_DATE.findall(outside_code)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = "".join(
        char for char in heading.lower() if char in "-_ " or unicodedata.category(char)[0] in "LMN"
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    parsed = PARSER.parse(text)
    for opening, inline in itertools.pairwise(parsed):
        if opening.type != "heading_open":
            continue
        words = "".join(child.content for child in inline.children or ())
        base = slug(words)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def has_anchor(page: Path, fragment: str) -> bool:
    """Whether a page has the heading a link's #fragment names."""
    return unquote(fragment) in anchors(page.read_text(encoding="utf-8"))


def broken_links(page: Path) -> list[str]:
    """The page's relative links (and #anchors) that reach no file or no heading."""
    text = page.read_text(encoding="utf-8")
    broken = []
    for token in tokens(text):
        target = token.attrs.get("href") or token.attrs.get("src")
        if token.type not in ("link_open", "image") or not isinstance(target, str):
            continue
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue
        path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif parts.fragment and path.suffix == ".md" and not has_anchor(path, parts.fragment):
            broken.append(f"{target}: no such heading")
    return broken


def test_readme_is_a_front_door() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


@pytest.mark.parametrize("page", current_pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_page_has_no_history(page: Path) -> None:
    assert history_marks(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", linked_pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_page_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_the_history_check_tells_history_from_content() -> None:
    page = (
        "Measured on 2026-11-28 (issue 19), main as it was (c400283), on November 3, 2026.\n"
        "A date of any year is content in code: `0001-01-01`, `9999-12-31`, `2026-11-22`.\n"
        "```\nselect timestamp '2026-11-22 01:00:00'\n```\n"
        "Plain figures stay: 4239806 events, 1.53x, listing, defaced.\n"
    )
    assert history_marks(page) == ["issue 19", "c400283", "2026-11-28", "November 3, 2026"]


def test_the_link_check_finds_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Dates and timestamps: of any year\n\n## Setup\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#dates-and-timestamps-of-any-year) [ok](#a-b-c) [ok](https://x.org/y)\n"
        "[gone](missing.md) [no heading](other.md#nowhere) [no anchor](#setup)\n\n"
        "## A `b` c\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nowhere: no such heading",
        "#setup: no such heading",
    ]


@pytest.mark.parametrize("page", sorted({name for name, _ in RUN_BY}))
def test_every_command_of_the_guides_has_a_test_that_runs_it(page: str) -> None:
    """A section with shell commands is run as written by the test RUN_BY names (a whole
    page's runner under ""), which reads the page itself; only NOT_RUN's lines are left."""
    for block in code_blocks(REPO / "docs" / page, "bash", "sh"):
        if not runnable(block):
            continue
        runner = RUN_BY.get((page, block.section)) or RUN_BY.get((page, ""))
        assert runner, f"{page}, section {block.section!r}: no test runs its commands"
        source = (REPO / runner).read_text()
        assert page in source and "code_blocks(" in source, runner
        if (page, "") not in RUN_BY:
            assert f'"{block.section}"' in source, f"{runner} does not run {block.section!r}"
