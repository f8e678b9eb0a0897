"""`lakehouse bench latency` at a tiny scale and rate, so it cannot rot; the feed without Spark."""

from __future__ import annotations

from pathlib import Path

from lakehouse.bench.latency_feed import Record, SinkWriter, sample_of

from .test_bench import run_bench


def test_bench_latency_reports_percentiles_throughput_and_memory(local_stack, tmp_path) -> None:
    results, printed = run_bench(
        "latency", "--scale", "0.001", "--rate", "10", "--minutes", "0.5", results=tmp_path
    )
    assert results["valid"] is True
    assert results["state"]["ours_matches_expected"] is True
    assert results["measured"]["service_exit"] == 0
    assert results["samples"] > 0 and results["unseen_samples"] == 0
    lat = results["latency_seconds"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert results["sustained_events_per_second"] > 0
    assert results["measured"]["service_peak_rss_bytes"] > 100 * 1024**2  # a JVM at least
    assert "| p50 s |" in printed and "bench latency done" in printed
    # Every generated change was landed (and the state check saw all of them applied).
    assert results["measured"]["records"] == results["measured"]["stream_records"] > 0


def test_the_feed_cuts_files_by_offset_and_samples_keyed_changes(tmp_path: Path) -> None:
    lines = [
        '{"schema": {}, "payload": {"before": null, "after": {"salesid": 7}, "op": "c"}}',
        "null",
        '{"schema": {}, "payload": {"before": {"salesid": 8}, "after": null, "op": "d"}}',
    ]
    folder = "topics/t.s/year=2024/month=03/day=02"
    records = [Record("t.s", 0, 40 + i, folder, line) for i, line in enumerate(lines)]
    starts = SinkWriter(tmp_path).flush(records)
    assert starts == {("t.s", 0): 40}
    written = tmp_path / folder / "t.s+0+0000000040.json"
    assert written.read_text().splitlines() == lines
    created = sample_of(records[0], "sales", ("salesid",), 40, 1.0)
    deleted = sample_of(records[2], "sales", ("salesid",), 40, 1.0)
    assert (created.key, deleted.key, created.file_offset) == (7, 8, 40)
    assert sample_of(records[1], "sales", ("salesid",), 40, 1.0) is None  # a tombstone
