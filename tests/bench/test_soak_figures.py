"""The soak's figures and chart from records made by hand, and the JVM counters of a real JVM."""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
import time
from pathlib import Path

import pytest

from ingestion.errors import UserError
from lakehouse.bench import chart, soak_figures, soak_users
from lakehouse.bench.jvm_counters import class_histogram, counters_file, grown, heap
from lakehouse.bench.soak_figures import Minute

MIB = 1024**2


def records(minutes: int, thrift_old: list[int], sessions_late: float = 0.2) -> dict:
    """A run of `minutes`, one session and one batch a minute, Thrift's old gen as given (MiB)."""
    return {
        "sessions": [
            (m * 60 + 5, 0.1 if m < minutes - 1 else sessions_late) for m in range(minutes)
        ],
        "latencies": [(m * 60 + 10, 10.0 + (m >= 2 * minutes // 3)) for m in range(minutes)],
        "batches": [(m * 60 + 20, 8.0, 100) for m in range(minutes)],
        "jobs": [{"kind": "dbt build", "started": 30.0, "seconds": 50.0, "returncode": 0}],
        "per_minute": [
            Minute(
                m,
                rss={"thrift": 2000 * MIB, "service": 3000 * MIB},
                old_after_gc={"thrift": thrift_old[m] * MIB, "service": 800 * MIB},
                heap_after_gc={"thrift": (thrift_old[m] + 100) * MIB},
                heap_max={"thrift": 6144 * MIB},
            )
            for m in range(minutes)
        ],
    }


def judged(run: dict, seconds: float) -> dict:
    results = {
        "windows": soak_figures.windows(run, seconds),
        "trends": soak_figures.trends(run, seconds),
        "state": {"exact": True, "summary": "exact"},
    }
    results["goals"] = soak_figures.goals(results)
    return results


def test_a_flat_run_meets_every_goal_and_its_windows_add_up() -> None:
    run = records(18, [1000] * 18)
    results = judged(run, 18 * 60)
    assert [w["sessions"] for w in results["windows"]] == [3] * 6
    assert [(w["from_minute"], w["to_minute"]) for w in results["windows"]][-1] == (15.0, 18.0)
    assert results["windows"][0]["jobs"] == 1 and results["windows"][1]["jobs"] == 0
    assert results["windows"][5]["session_select1_p99"] == 0.2
    assert results["trends"]["batch_seconds_last_vs_first"] == 1.0
    assert results["trends"]["latency_p50_last_vs_first"] == 1.1  # 11 s against 10 s
    assert results["trends"]["memory_growth_last_third"]["thrift old after gc"] == 0.0
    assert results["trends"]["thrift_live_heap_of_limit"] == round(1100 / 6144, 3)
    assert all(results["goals"].values()), results["goals"]


def test_an_old_generation_that_climbs_a_slow_session_and_an_unanswered_one_fail() -> None:
    climbing = [1000 + 10 * m for m in range(18)]  # +60 MiB over the last six minutes
    run = records(18, climbing, sessions_late=2.5)
    run["sessions"].append((17 * 60 + 30, None))
    results = judged(run, 18 * 60)
    growth = results["trends"]["memory_growth_last_third"]["thrift old after gc"]
    assert growth == pytest.approx(50 / 1120, abs=1e-4)  # the line from minute 12 to 17
    assert results["goals"]["memory_grows_under_5pc_in_last_third"] is True  # 4.5%: under
    steeper = judged(records(18, [1000 + 20 * m for m in range(18)]), 18 * 60)
    assert steeper["goals"]["memory_grows_under_5pc_in_last_third"] is False  # 7.8%
    assert results["windows"][5]["sessions_unanswered"] == 1
    assert results["goals"]["select1_p99_within_2s_every_window"] is False


def test_the_markdown_tables_every_window_and_names_each_goal() -> None:
    run = records(6, [1000] * 6)
    results = {
        **judged(run, 360),
        "scale": 0.1, "rate": 200, "minutes": 6.0, "session_seconds": 10.0,
        "machine": {"cpus": 2}, "load_average_before": 0.3, "jobs_summary": "1 x dbt build",
    }  # fmt: skip
    text = soak_figures.markdown(results)
    assert text.startswith("### bench soak --scale 0.1 --rate 200 --minutes 6")
    assert (
        "| 0-1 | 1 (0) | 0.10 | 10.0 / 10.0 | 1 | 8.0 | 1 (0) | 3,000 | 2,000 | 800 | 1,000 |"
        in text
    )
    assert "select1_p99_within_2s_every_window met" in text


def test_the_chart_is_a_png_drawn_from_the_results_json(tmp_path: Path) -> None:
    run = records(6, [1000] * 6)
    results = {
        "benchmark": "soak", "scale": 0.1, "rate": 200, "minutes": 6.0, "soak_seconds": 360,
        **{k: v for k, v in run.items() if k != "per_minute"},
        "per_minute": [dataclasses.asdict(m) for m in run["per_minute"]],
    }  # fmt: skip
    results_file = tmp_path / "soak.json"
    results_file.write_text(json.dumps(results))
    picture = chart.draw(results_file)
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 720 and height > 5 * 150  # five panels, one above the other
    other = tmp_path / "floor.json"
    other.write_text(json.dumps({"benchmark": "floor"}))
    with pytest.raises(UserError, match="charts are drawn for: soak, ingest, latency"):
        chart.draw(other)


def test_the_heap_is_read_from_a_running_jvm_as_jstat_reads_it(tmp_path: Path) -> None:
    source = tmp_path / "Hold.java"
    source.write_text(
        "public class Hold { public static void main(String[] a) throws Exception {"
        " byte[][] k = new byte[40][]; for (int i = 0; i < 40; i++) k[i] = new byte[1 << 20];"
        ' System.out.println("ready"); Thread.sleep(120000); } }'
    )
    java = subprocess.Popen(["java", "-Xmx256m", str(source)], stdout=subprocess.PIPE, text=True)
    try:
        assert java.stdout.readline().strip() == "ready"
        ends = time.monotonic() + 30
        while not counters_file(java.pid).exists() and time.monotonic() < ends:
            time.sleep(0.1)
        reading = heap(java.pid)
        jstat = subprocess.run(["jstat", "-gc", str(java.pid)], capture_output=True, text=True)
        histogram = class_histogram(java.pid)
    finally:
        java.kill()
        java.wait()
    header, values = (line.split() for line in jstat.stdout.splitlines()[:2])
    old_kib = float(values[header.index("OU")])
    assert reading is not None and abs(reading.max_bytes - 256 * MIB) < MIB  # -Xmx, plus a word
    assert reading.old_used + reading.used > 40 * MIB  # the 40 arrays are held
    assert abs(reading.old_used / 1024 - old_kib) <= 2048  # jstat's OU, read a moment later
    assert heap(java.pid) is None  # gone: no counters
    [(_, count, size)] = [row for row in histogram if row[0] == "[B"]  # byte arrays
    assert count >= 40 and size >= 40 * MIB  # the 40 arrays held, counted live
    assert class_histogram(java.pid) == []  # gone: nothing to ask


def test_the_classes_that_grew_most_are_named_with_their_growth() -> None:
    early = [("[B", 10, 100 * MIB), ("java.lang.String", 5, MIB), ("Gone", 1, 10)]
    late = [("[B", 30, 300 * MIB), ("HoodieFileIndex", 7, 50 * MIB), ("java.lang.String", 4, MIB)]
    assert grown(early, late) == [("[B", 200 * MIB, 20), ("HoodieFileIndex", 50 * MIB, 7)]


def test_the_markdown_names_the_thrift_classes_that_grew() -> None:
    run = judged(records(6, [1000] * 6), 360)
    histograms = {"early": [["[B", 10, 100 * MIB]], "late": [["[B", 30, 300 * MIB]]}
    base = {"scale": 0.1, "rate": 200, "minutes": 6.0, "session_seconds": 10.0,
            "machine": {"cpus": 2}, "load_average_before": 0.5, "jobs_summary": "1 x dbt build",
            "soak_seconds": 360, **records(6, [1000] * 6), **run}  # fmt: skip
    text = soak_figures.markdown({**base, "thrift_histograms": histograms})
    assert "- Thrift server's live classes grown most: [B +200 MiB (+20)" in text
    assert "no histograms taken" in soak_figures.markdown(base)


def test_the_progress_line_says_the_minute_the_batches_and_each_process_memory() -> None:
    minute = records(3, [1000, 1000, 1000])["per_minute"][-1]
    assert soak_users.progress_line(20, minute, 17) == (
        "soak: 20 min, 17 batches; RSS service 2.9 GiB (old gen 0.8), thrift 2.0 GiB (old gen 1.0)"
    )
