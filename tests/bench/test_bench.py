"""`lakehouse bench ingest`, `floor` and `dbt` at a tiny scale, so they cannot rot.

The full runs (--scale 1 and 10) stay out of the suite; these check that the
commands run, print and write their figures, that every contender's final
state (ours, Delta, Iceberg copy-on-write and merge-on-read, Hudi's upsert)
equals the generator's, and that HoodieStreamer is reported unavailable with
the reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from ingestion.config import load_tables
from ingestion.errors import UserError
from ingestion.settings import settings
from ingestion.spark import job_jars, spark_conf
from lakehouse.bench.floor import bronze_rows
from lakehouse.bench.ingest_bench import PEER_NAMES, chosen_peers
from lakehouse.bench.memory import PeakSampler, rss_bytes, shares_memory, tree, tree_rss_bytes
from lakehouse.bench.peers import bench_jars, engine_conf
from lakehouse.bench.verify import against_expected
from lakehouse.project_copy import project_copy

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
TINY = "0.001"


def run_bench(*args: str, results: Path, env: dict[str, str] | None = None) -> tuple[dict, str]:
    """Run `lakehouse bench ...`; return its results JSON and what it printed."""
    done = subprocess.run(
        [LAKEHOUSE, "bench", *args, "--results", str(results)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = results.glob("*.json")
    assert path.with_suffix(".md").read_text().startswith("### bench")
    return json.loads(path.read_text()), done.stdout


@pytest.fixture(scope="module")
def ingest_results(local_stack, tmp_path_factory) -> tuple[dict, str]:
    """The bench on a copy of the project whose `sales` is merge-on-read: ours maintains it."""
    project = project_copy(tmp_path_factory.mktemp("bench-project") / "project", ["conf"])
    tables = project / "conf" / "tables.yml"
    text = tables.read_text()
    sales = "  sales:\n    buckets: 4\n"
    assert sales in text
    tables.write_text(text.replace(sales, sales + "    table_type: mor\n"))
    # Two contenders at once: the figures are not comparable, which a smoke run can afford.
    return run_bench(
        "ingest",
        "--scale",
        TINY,
        "--change-batches",
        "1",
        "--jobs",
        "2",
        results=tmp_path_factory.mktemp("bench-ingest"),
        env={**os.environ, "LAKEHOUSE_PROJECT_DIR": str(project)},
    )


CONTENDERS = ("ours", "delta", "iceberg_cow", "iceberg_mor", "hudi", "ceiling")


def test_bench_ingest_reports_every_figure(ingest_results) -> None:
    results, printed = ingest_results
    assert results["events"]["snapshot"] > 0 and results["events"]["changes"] > 0
    for name in CONTENDERS:
        figures = results["contenders"][name]
        assert figures["status"] == "ran", (name, figures["reason"])
        for phase in ("snapshot", "changes"):
            assert figures[phase]["seconds"] > 0
            assert figures[phase]["events_per_second"] > 0
        assert figures["changes"]["latency_max_seconds"] > 0
        assert figures["peak_rss_bytes"] > 100 * 1024**2  # a JVM at least
        assert figures["files_written"] > 0 and figures["bytes_written"] > 0
        if name != "ours":
            assert results["ratios"][name]["changes"] > 0
    for name in CONTENDERS[:-1]:
        assert results["contenders"][name]["read_seconds"] > 0
    assert "| Delta Lake 3.3 MERGE INTO |" in printed and "ours/Delta Lake" in printed
    assert "bench ingest done" in printed
    [drawn] = [line.removeprefix("chart: ") for line in printed.splitlines() if "chart: " in line]
    assert Path(drawn).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # from the results JSON
    assert "not comparable: 2 contenders ran at once" in printed and results["jobs"] == 2


def test_bench_ingest_times_ours_maintenance_apart_and_reads_on_both_sides(
    ingest_results,
) -> None:
    """After its batches ours compacts its merge-on-read table; both states are exact."""
    results, printed = ingest_results
    ours = results["contenders"]["ours"]
    assert ours["maintenance"]["seconds"] > 0 and ours["maintenance"]["files_written"] > 0
    before = ours["state_before_maintenance"]["tables"]
    assert all(t["differing_keys"] == 0 and t["read_seconds"] > 0 for t in before.values())
    changes = ours["changes"]
    amortized = changes["events"] / (changes["seconds"] + ours["maintenance"]["seconds"])
    assert ours["changes_maintained_events_per_second"] == round(amortized, 1)
    assert results["ratios"]["iceberg_mor"]["changes_maintained"] > 0
    assert "ours' maintenance (`lakehouse maintain`" in printed
    assert "with ours' maintenance amortized" in printed
    # Hudi's cheaper reads of the merge-on-read `sales` alone, on both sides of maintenance.
    for state in (before, ours["state"]["tables"]):
        floors = {name for name, t in state.items() if t.get("floor_read_seconds")}
        assert floors == {"sales"}
        assert all(s > 0 for s in state["sales"]["floor_read_seconds"].values())
    assert "read Hudi's cheaper ways, neither exact" in printed


def test_bench_ingest_checks_every_final_state(ingest_results) -> None:
    """Ours and every peer equal the generator's expected state, key by key."""
    results, _ = ingest_results
    for name in CONTENDERS[:-1]:
        tables = results["contenders"][name]["state"]["tables"]
        assert len(tables) == 7, name
        assert all(t["differing_keys"] == 0 and t["rows"] > 0 for t in tables.values()), name
    assert results["contenders"]["ceiling"]["state"] is None
    assert results["valid"] is True


def test_bench_ingest_peers_are_chosen_by_name() -> None:
    """`--peers`: ours and the ceiling always run; a name not known is refused with the list."""
    assert chosen_peers("all") == frozenset(PEER_NAMES)
    assert "streamer" in PEER_NAMES and "ceiling" not in PEER_NAMES
    assert chosen_peers("none") == frozenset()
    assert chosen_peers("delta, iceberg_mor") == {"delta", "iceberg_mor"}
    with pytest.raises(UserError, match=r"unknown peer\(s\) deltalake; give all, none or"):
        chosen_peers("delta,deltalake")


def test_bench_ingest_says_why_hoodiestreamer_did_not_run(ingest_results) -> None:
    results, printed = ingest_results
    streamer = results["contenders"]["streamer"]
    if streamer["status"] == "ran":
        assert results["ratios"]["streamer"]["snapshot"] > 0
    else:
        assert streamer["status"] == "unavailable"
        assert "hudi-utilities" in streamer["reason"]
        assert results["ratios"]["streamer"]["snapshot"] is None
        assert "unavailable" in results["ratios"]["streamer"]["void"]
        assert "HoodieStreamer (DeltaStreamer) unavailable: no hudi-utilities" in printed


def test_the_peers_jars_stay_out_of_the_projects_sessions() -> None:
    """Delta's and Iceberg's extensions and catalogs load only in the bench's peer processes."""
    conf = settings()
    shared = spark_conf(conf)
    assert not any(
        word in value.lower() for value in shared.values() for word in ("delta", "iceberg")
    )
    assert not any(jar.name.startswith(("delta", "iceberg")) for jar in job_jars(conf))
    delta = engine_conf(conf, "delta", Path("/lake"))
    assert delta["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    # Delta's state rebuilt in the project's shuffle partitions, not its default 50 tasks.
    assert delta["spark.databricks.delta.snapshotPartitions"] == str(conf.shuffle_partitions)
    assert [Path(jar).name for jar in delta["spark.jars"].split(",")] == [
        jar.name for jar in bench_jars(conf, "delta")
    ]  # local mode: the project's jars are on the driver's class path, not shipped


def test_the_peers_transform_gives_the_expected_state(ingest_results, spark) -> None:
    """HoodieStreamer's SQL transform and ordering, run by plain Spark, give the right state.

    What Hudi does with them (keep the highest `_cdc_position` per key) is done
    here with a window, so the peer's configuration is checked even without its jar.
    """
    source = settings().home / "bench" / "ingest" / "source"
    for table in load_tables(database="bench_bronze").values():
        files = [str(p) for p in (source / "topics" / table.topic).rglob("*.json")]
        rows = bronze_rows(spark, table, files)
        latest = Window.partitionBy(*table.key).orderBy(F.col("_cdc_position").desc())
        peer = rows.withColumn("_n", F.row_number().over(latest)).where("_n = 1").drop("_n")
        expected = source / "_expected" / f"{table.name}.jsonl"
        assert against_expected(spark, table, peer, expected)["differing_keys"] == 0, table.name


def test_bench_floor_times_each_contender_per_round_and_the_floor_holds_the_snapshot(
    local_stack, spark, tmp_path
) -> None:
    """`bench floor`: the three alternated, each timed every round; the lakes read back.

    The floor writes rows it does not decode, yet its bronze must still be the
    snapshot's state key by key, or its seconds would be a floor of other work.
    """
    results, printed = run_bench("floor", "--scale", TINY, "--rounds", "2", results=tmp_path)
    for phase in ("ceiling", "floor", "ours"):
        assert len(results["seconds"][phase]) == 2 and min(results["seconds"][phase]) > 0
        assert results["events_per_second"][phase] > 0
    assert set(results["ratios"]) == {"ours/ceiling", "floor/ceiling", "ours/floor"}
    assert results["rows"]["floor"] == results["rows"]["ours"] and results["valid"] is True
    work = settings().home / "bench" / "floor"
    lake = work / "run" / "out" / "floor"
    for table in load_tables(database="bench_floor").values():
        bronze = spark.read.format("hudi").load(str(lake / table.database / table.name))
        expected = work / "source" / "_expected" / f"{table.name}.jsonl"
        assert against_expected(spark, table, bronze, expected)["differing_keys"] == 0, table.name
    assert "| floor: typed JSON -> changelog + bronze Hudi bulk inserts |" in printed
    assert "bench floor done" in printed and "ours/floor" in printed


def test_bench_dbt_reports_full_and_two_hours_of_incremental_builds(local_stack, tmp_path) -> None:
    # The incremental mart and its parents, without tests (some need the whole project).
    results, printed = run_bench(
        "dbt",
        "--scale",
        TINY,
        "--select",
        "+fct_sales",
        "--exclude",
        "resource_type:test resource_type:unit_test",
        results=tmp_path,
    )
    assert results["valid"] is True
    for build in ("full", "incremental", "next_incremental"):
        figures = results[build]
        assert figures["returncode"] == 0 and figures["seconds"] > 0
        assert figures["nodes"] > 0 and set(figures["statuses"]) == {"success"}
        assert figures["layer_seconds"]["staging"] > 0
        assert figures["layer_seconds"]["marts"] > 0
        assert figures["model_seconds"]["fct_sales"] > 0
    # The incremental builds are the hourly job's, with its test scope, one per change batch.
    for build in ("incremental", "next_incremental"):
        assert "{tests_scope: touched, maintain_facts: false}" in results[build]["args"]
        assert results[f"{build}_vs_full"] > 0
    assert results["change_events"] > 0
    snapshot, first_batch, _ = results["setup_ingest"]  # the snapshot, then one batch an hour
    assert snapshot["events"] == results["rows"]
    assert first_batch["events"] == results["change_events"]
    assert all(run["peak_rss_bytes"] > 0 for run in results["setup_ingest"])
    assert "setup ingestion (ours" in printed
    assert "first hour incremental/full" in printed and "next hour incremental/full" in printed
    assert "bench dbt done" in printed


def test_peak_sampler_counts_child_processes() -> None:
    """The sampled peak includes a child's memory, not only the parent's."""
    code = "import time; block = bytearray(300 * 1024 * 1024); time.sleep(2)"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}])",
        ]
    )
    with PeakSampler([parent.pid], interval=0.1) as sampler:
        parent.wait()
    assert sampler.peak > 300 * 1024**2


# A child started with CLONE_VM (as posix_spawn's vfork does until exec) that
# pauses in its parent's address space; the parent prints its pid.
SHARED_ADDRESS_SPACE_CHILD = """
import ctypes, time
libc = ctypes.CDLL(None)
block = bytearray(300 * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
stack = ctypes.create_string_buffer(1024 * 1024)
top = ctypes.c_void_p(ctypes.addressof(stack) + len(stack) - 64)
print(libc.clone(ctypes.cast(libc.pause, ctypes.c_void_p), top, 0x100 | 17, None), flush=True)
time.sleep(60)
"""


def test_a_child_sharing_its_parents_address_space_is_counted_once() -> None:
    """A JVM's spawning child reports its parent's whole RSS; the sum holds it once."""
    parent = subprocess.Popen(
        [sys.executable, "-c", SHARED_ADDRESS_SPACE_CHILD], stdout=subprocess.PIPE, text=True
    )
    child = int(parent.stdout.readline())
    try:
        assert child > 0, "clone failed"
        assert tree([parent.pid]) == {parent.pid, child}
        assert shares_memory(parent.pid, child) and not shares_memory(os.getpid(), parent.pid)
        assert sum(map(rss_bytes, (parent.pid, child))) > 600 * 1024**2
        assert 300 * 1024**2 < tree_rss_bytes([parent.pid]) < 400 * 1024**2
    finally:
        if child > 0:  # os.kill(-1) would signal every process
            os.kill(child, signal.SIGKILL)  # it outlives its parent otherwise
        parent.kill()
        parent.wait()
