"""What a person running `lakehouse cdc generate` sees: a progress bar and a summary.

Built on the project's one output helper (`lakehouse.output`), so it looks
like every other command.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

from rich.table import Table

from lakehouse import output
from lakehouse.cdc.generate.generator import GenerateSummary


class ProgressBar(AbstractContextManager["ProgressBar"]):
    """One bar per batch (snapshot, change batch 1, ...), counting records."""

    def __init__(self, enabled: bool = True) -> None:
        self._progress = output.progress()
        if not enabled:
            self._progress.disable = True
        self._task = None

    def __enter__(self) -> ProgressBar:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def start(self, description: str, total: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total)
        self._task = self._progress.add_task(description, total=max(total, 1))

    def advance(self, count: int) -> None:
        if self._task is not None and count:
            self._progress.advance(self._task, count)


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def summary_line(summary: GenerateSummary) -> str:
    return (
        f"generated {summary.records:,} records in {summary.file_count:,} files "
        f"({human_bytes(summary.bytes)}, {summary.format}) to {summary.out} "
        f"in {summary.seconds:.1f} s"
    )


def summary_table(summary: GenerateSummary) -> Table:
    table = Table(title=None, show_edge=False)
    table.add_column("topic")
    table.add_column("records", justify="right")
    table.add_column("tombstones", justify="right")
    table.add_column("files", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("seconds", justify="right")
    for topic in summary.topics:
        table.add_row(
            topic.topic,
            f"{topic.records:,}",
            f"{topic.tombstones:,}",
            f"{topic.files:,}",
            human_bytes(topic.bytes),
            f"{topic.seconds:.1f}",
        )
    return table


def print_summary(summary: GenerateSummary) -> None:
    output.say(summary_line(summary))
    output.console.print(summary_table(summary))
