"""The one small output helper: user-facing messages, progress and summaries.

Logs go through `logging`; what a person running `lakehouse` reads goes
through here, so every command looks and reports the same way.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

# A pipe or a file has no width: a line as wide as this is never cut, wrapped
# or ellipsized, and a table keeps its natural width (rich pads no wider).
PIPED_WIDTH = 100_000


class WholeLinesConsole(Console):
    """A console that prints every line whole when it writes to a pipe or a file.

    On a terminal, rich fits tables to its width; elsewhere it would fit them
    to 80 columns (or the width of whatever terminal stdin is), so a summary
    piped to a file or a scheduler's log lost its columns' text to "…" and
    wrapped cells. Asked each time, so a stream redirected later counts too.
    """

    def __init__(self, *args: Any, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, width=width, **kwargs)
        # Only a width asked for holds off a pipe: rich also takes one from COLUMNS,
        # which shells, schedulers and pytest-xdist's workers export (often 80).
        self._asked_width = width

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._asked_width is None and not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size
        self._asked_width = new_size[0]


console = WholeLinesConsole(stderr=False, highlight=False)
error_console = WholeLinesConsole(stderr=True, highlight=False)


def say(message: str) -> None:
    console.print(message, markup=False, soft_wrap=True)


def error(message: str) -> None:
    error_console.print(f"error: {message}", markup=False, soft_wrap=True)


def progress() -> Progress:
    """A progress display for long work; silent bar when not on a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not sys.stdout.isatty(),
    )
