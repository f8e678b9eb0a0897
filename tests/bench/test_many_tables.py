"""`lakehouse bench tables` on three small tables: its batches, figures and read-back check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingestion.errors import UserError
from lakehouse.bench import many_tables


def test_the_bench_times_both_batches_and_reads_every_table_back(spark, tmp_path: Path) -> None:
    results = many_tables.run_tables_bench(3, 2, tmp_path, log=lambda _: None)
    assert results["valid"]
    timed = ("one_table_seconds", "every_table_seconds", "floor_seconds")
    assert [len(results[name]) for name in timed] == [2, 2, 2]
    assert all(s > 0 for name in timed for s in results[name])
    written = json.loads(Path(results["results_file"]).read_text())
    assert written["seconds_per_changed_table"] == results["seconds_per_changed_table"]
    table = Path(results["results_file"]).with_suffix(".md").read_text()
    assert "| one change in each of 3 tables |" in table
    assert "| floor: 2 bare one-row Hudi upserts in each of 3 tables |" in table


def test_the_figures_are_the_medians_difference_per_table() -> None:
    shown = many_tables.figures({"tables": 5, "one_table_seconds": [2.0, 3.0, 9.0],
                                 "every_table_seconds": [7.0, 11.0, 8.0],
                                 "floor_seconds": [4.0, 5.0, 6.0]})  # fmt: skip
    assert shown == {"one_table_median_seconds": 3.0, "every_table_median_seconds": 8.0,
                     "floor_median_seconds": 5.0, "seconds_per_changed_table": 1.25,
                     "every_over_one": 2.67, "every_over_floor": 1.6}  # fmt: skip


def test_one_table_is_refused() -> None:
    with pytest.raises(UserError, match="--tables 1"):
        many_tables.run_tables_bench(1, 1)
