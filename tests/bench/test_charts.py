"""`bench ingest` and `bench latency` charts, drawn from results JSON in the shape the commands
write (made here by their own code, from figures given by hand); the commands draw theirs
at the end of a run (tests/bench/test_bench.py, test_latency.py)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from lakehouse.bench import chart, latency
from lakehouse.bench.ingest_results import Contender, IngestBenchResults, Phase


def png_size(picture: Path) -> tuple[int, int]:
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def phases(snapshot: float, *changes: float) -> list[Phase]:
    return [Phase(i, 100, s, s - 5, 2**30, 1, 4, 4096) for i, s in enumerate((snapshot, *changes))]


def test_the_ingest_chart_bars_each_contender_that_ran(tmp_path: Path) -> None:
    contenders = [
        Contender("ours", "ours (Hudi)", phases=phases(60.0, 20.0, 22.0)),
        Contender("delta", "Delta 3.3", phases=phases(90.0, 30.0, 31.0)),
        Contender("streamer", "HoodieStreamer", status="unavailable", reason="not served"),
    ]
    results = IngestBenchResults(
        scale=1.0, change_batches=2, format="json", events={"snapshot": 100}, machine={},
        spark={}, contenders=contenders, ratios={}, goals={}, valid=True,
    )  # fmt: skip
    results_file = tmp_path / "ingest-scale1.json"
    results_file.write_text(results.to_json())
    rows = chart.ingest_rows(json.loads(results_file.read_text()))
    assert [(r["contender"], r["phase"], r["seconds"]) for r in rows] == [
        ("ours (Hudi)", "snapshot", 60.0), ("ours (Hudi)", "change batch", 21.0),
        ("Delta 3.3", "snapshot", 90.0), ("Delta 3.3", "change batch", 30.5),
    ]  # fmt: skip
    width, height = png_size(chart.draw(results_file))
    assert width > 720 and height > 150  # two panels: the snapshot, a change batch


def test_the_latency_chart_is_a_histogram_of_every_sample(tmp_path: Path) -> None:
    measured = {
        "latencies": [10.0, 12.5, 14.0, 30.0], "change_events_applied": 4000,
        "stream_seconds": 10.0, "service_exit": 0, "by_table": {}, "unseen": 0,
        "records": 4000, "seconds": 10.0,
    }  # fmt: skip
    options = latency.LatencyOptions(0.1, 400, 1.0)
    results = latency.figures(options, measured, {"ours_matches_expected": True})
    results_file = tmp_path / "latency-scale0.1.json"
    results_file.write_text(json.dumps(results))
    width, height = png_size(chart.draw(results_file))
    assert width > 720 and height > 150
