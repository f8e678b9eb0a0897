"""`lakehouse bench latency` at a tiny scale and rate (3 small tables beside TICKIT), so it
cannot rot; the feed without Spark."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingestion.config import load_tables
from ingestion.hudi_timeline import META_FOLDER, TABLE_PROPERTIES
from ingestion.settings import settings
from lakehouse.bench.latency import SERVICE_LOG, Prober, generate_changes, wait_health
from lakehouse.bench.latency_feed import Record, Sample, SinkWriter, sample_of
from lakehouse.bench.live_latency import service_env
from lakehouse.bench.staging import open_landing

from .test_bench import run_bench


def test_bench_latency_reports_percentiles_throughput_and_memory(local_stack, tmp_path) -> None:
    results, printed = run_bench(
        "latency", "--scale", "0.001", "--rate", "10", "--minutes", "0.5", "--extra-tables", "3",
        "--merge-on-read", "sales", "--probe-pause", "0.5", results=tmp_path,
    )  # fmt: skip
    assert results["valid"] is True
    assert results["state"]["ours_matches_expected"] is True
    # The service ran on a project copy listing 3 small tables more; each holds its last change.
    assert results["extra_tables"] == 3 and results["state"]["extra_tables_match"] is True
    # ... and saying `table_type: mor` for sales, which its bronze table is.
    assert results["merge_on_read"] == ["sales"] and " --merge-on-read sales " in printed
    work = Path(settings().home) / "bench" / "latency"
    properties = work / "lake" / "bench_latency" / "sales" / META_FOLDER / TABLE_PROPERTIES
    assert "hoodie.table.type=MERGE_ON_READ" in properties.read_text()
    assert results["measured"]["service_exit"] == 0
    # The prober paused as asked, and each side's cores while the changes streamed are there:
    # the service applied them, the Thrift server answered the prober.
    measured = results["measured"]
    assert measured["probe_pause_seconds"] == 0.5 and " --probe-pause 0.5\n" in printed
    assert measured["service_cores"] > 0 and measured["thrift_cores"] > 0
    assert f"the service used {measured['service_cores']} cores" in printed
    # How warm the Thrift server was when the changes began: up since the stack started.
    before = measured["thrift_before"]
    assert before["uptime_seconds"] > 0 and before["cpu_seconds"] > 0
    assert f"The Thrift server had been up {before['uptime_seconds']:,} s" in printed
    assert results["samples"] > 0 and results["unseen_samples"] == 0
    lat = results["latency_seconds"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    by_table = results["latency_by_table"]
    assert sum(row["samples"] for row in by_table.values()) == results["samples"]
    assert all(0 < row["p50"] <= row["p95"] <= lat["max"] for row in by_table.values())
    assert "- by table, samples (p50 / p95 s): " in printed
    assert results["sustained_events_per_second"] > 0
    assert results["measured"]["service_peak_rss_bytes"] > 100 * 1024**2  # a JVM at least
    assert "| p50 s |" in printed and "bench latency done" in printed
    [picture] = tmp_path.glob("*.png")  # drawn from the results JSON beside it
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Every generated change was landed (and the state check saw all of them applied).
    source = work / "source"
    landing = open_landing(source)
    generated = sum(
        len((source / f).read_text().splitlines())
        for batch in range(1, landing.batches)
        for files in landing.files(batch).values()
        for f in files
    )
    # ... and one small table's change before every 9 of them (--rate 10: one in each flush).
    landed = generated + math.ceil(generated / 9)
    assert results["measured"]["records"] == results["measured"]["stream_records"] == landed > 0


def test_the_prober_asks_again_on_a_new_connection_after_losing_one(local_stack) -> None:
    connections = []

    def visible(connection, table: str, samples: list[Sample]) -> set[int]:
        connections.append(connection)
        if len(connections) == 1:
            raise OSError("connection reset by peer")
        return {0}

    prober = Prober(settings(), visible)
    prober.add(Sample("sales", "salesid", 7, "tickit.ecomm.sales", 0, time.monotonic()))
    prober.probe_once()
    assert prober.outstanding() == 1 and prober.seen == []
    prober.probe_once()
    assert prober.outstanding() == 0 and [table for table, _ in prober.seen] == ["sales"]
    assert connections[1] is not connections[0]
    prober._close()


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


def test_generated_stream_holds_about_the_events_asked_for(tmp_path) -> None:
    # Batches grow with the table's inserts: sized as if it stayed put, a
    # 30-minute soak's stream came out several times too long.
    landing = generate_changes(tmp_path / "source", 0.01, 40_000)
    streamed = sum(landing.events(batch) for batch in range(1, landing.batches))
    assert 0.9 * 40_000 <= streamed <= 1.1 * 40_000
    assert landing.batches > 2


def test_the_live_service_runs_on_a_copy_making_the_named_tables_merge_on_read(tmp_path) -> None:
    """`bench latency --live --merge-on-read listing`: the service's project says `mor` for
    listing alone; without the option it runs on the project itself."""
    assert "LAKEHOUSE_PROJECT_DIR" not in service_env(tmp_path, ())
    env = service_env(tmp_path, ("listing",))
    copy = Path(env["LAKEHOUSE_PROJECT_DIR"])
    assert copy.parent == tmp_path
    kinds = {
        name: table.table_type for name, table in load_tables(copy / "conf" / "tables.yml").items()
    }
    shipped = {name: table.table_type for name, table in load_tables().items()}
    assert kinds == {**shipped, "listing": "mor"} and shipped["listing"] != "mor"


def test_a_service_that_exits_is_reported_with_its_last_line_and_log(tmp_path) -> None:
    """The next run empties the logs folder, so the error itself says why the service stopped."""
    log = tmp_path / SERVICE_LOG
    log.parent.mkdir()
    command = "import sys; print('starting'); sys.exit('tables.yml: no table named lsting')"
    with log.open("wb") as output:
        service = subprocess.Popen([sys.executable, "-c", command], stdout=output, stderr=output)
        service.wait(timeout=60)
    with pytest.raises(RuntimeError) as raised:
        wait_health(tmp_path / "health.json", service, lambda _: True, deadline=60)
    assert str(raised.value) == (
        f"the ingestion service exited with 1: tables.yml: no table named lsting (log {log})"
    )
