"""The one small output helper: user-facing messages, progress and summaries.

Logs go through `logging`; what a person running `lakehouse` reads goes
through here, so every command looks and reports the same way.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

console = Console(stderr=False, highlight=False)
error_console = Console(stderr=True, highlight=False)


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
