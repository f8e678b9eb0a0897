"""Output to a pipe or a file prints whole: no table fitted to 80 columns, no "…", no wrapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingestion.profile import StepTiming
from ingestion.results import IngestRun, TableResult
from lakehouse import ingest_command

WIDE = TableResult(
    "listing_with_a_rather_long_bronze_table_name", 12, {"r": 1234567, "c": 3, "u": 2, "d": 1},
    4, 1234570, 1, 2, 1.0, True,
    profile=(StepTiming("write bronze", 0.5, 3, {"hudi_upsert_seconds": 0.25}),),
)  # fmt: skip


def test_the_ingest_summary_piped_prints_every_column_whole(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # what rich takes for a pipe when it has no terminal
    run = IngestRun("2026-01-01 00:00:00.000000", 1.0, "/landing", "/lake", (WIDE,))
    record = Path("/a/rather/long/home/.lakehouse/runs/ingest-20260101T000000.json")
    ingest_command._summary(run, 1.0, record, profile=True)
    out = capsys.readouterr().out
    assert "…" not in out
    lines = out.splitlines()
    header = next(line for line in lines if "events r/c/u/d/t" in line)
    for column in ("table", "files", "tombstones", "upserted", "deleted", "quarantined",
                   "seconds", "events/s"):  # fmt: skip
        assert f" {column} " in header, header
    row = next(line for line in lines if WIDE.table in line)
    for cell in ("12", "1234567/3/2/1/0", "1234570", "1.0", "1,234,573"):
        assert f" {cell} " in row, row
    step = next(line for line in lines if "write bronze" in line)
    assert "upsert_seconds 0.25" in step
    assert f"in 1.0s; run record {record}" in out.replace("\n", "")
    assert f"in 1.0s; run record {record}\n" in out  # and on one line


@pytest.mark.parametrize("terminal", [False, True])
def test_a_terminal_still_fits_the_table_to_its_width(terminal: bool, monkeypatch) -> None:
    from io import StringIO

    from lakehouse.output import PIPED_WIDTH, WholeLinesConsole

    monkeypatch.setenv("COLUMNS", "80")  # exported by shells and schedulers: not a pipe's width

    console = WholeLinesConsole(file=StringIO(), force_terminal=terminal, width=None)
    if terminal:
        assert console.width < PIPED_WIDTH
    else:
        assert console.width == PIPED_WIDTH
    assert WholeLinesConsole(file=StringIO(), width=70).width == 70  # a width asked for holds
