"""Benchmark results: one JSON and one Markdown file per run under .lakehouse/bench-results/.

The JSON keeps every figure (for comparing runs); the Markdown is the table
docs/performance.md quotes, printed at the end of the run as well.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingestion.settings import settings

GIB = 1024**3


def gib(value: int | None) -> str:
    return "-" if not value else f"{value / GIB:.1f} GiB"


def number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def ratio(value: float | None) -> str:
    return "void" if value is None else f"{value:.2f}x"


def percentile(values: list[float], fraction: float) -> float | None:
    """The value at `fraction` of the sorted values (nearest rank), to 0.01; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    memory = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = int(line.split()[1]) * 1024
    # The machine may be shared: the load says how much else was running.
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(memory / GIB, 1),
        "load_average_1m": os.getloadavg()[0],
    }


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write(name: str, results: dict[str, Any] | str, markdown: str, out: Path | None = None) -> Path:
    """Write `<name>-<timestamp>.json` (a dict, or JSON text) and `.md`; return the JSON path."""
    out = out or settings().home / "bench-results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out / f"{name}-{stamp}.json"
    text = results if isinstance(results, str) else json.dumps(results, indent=2, default=str)
    path.write_text(text.rstrip("\n") + "\n")
    path.with_suffix(".md").write_text(markdown + "\n")
    return path
