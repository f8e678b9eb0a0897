"""`lakehouse bench latency --live`: from a source database's commit to the Thrift server.

The live chain (`lakehouse cdc up`: PostgreSQL, MariaDB, Debezium, Kafka) holds
the TICKIT tables of `cdc load`; `lakehouse ingest --continuous` reads ems and
ecomm from Kafka in its own measured process (database `bench_latency_live`,
from the earliest offsets). Once it has caught up, `cdc workload` runs its
transactions at `--rate` per second, and beside it a probe writer commits one
new row a second, in turn an event in PostgreSQL and a listing in MariaDB (a copy
of an existing row under a key far above any the workload makes). The prober
asks the Thrift server until each probe's key is in bronze: latency is from the
commit's return to that answer (Debezium's capture, Kafka, the service's poll
and commit, the catalog). At the end a last probe per database and a poll
that finds nothing new drain the backlog, the service is stopped with SIGTERM
(it must exit 0), each bronze table's live rows are counted against the
database's own, and the probe rows are deleted. Figures of a run whose counts
differ are void.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from ingestion.continuous import now_text
from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from lakehouse import thrift_client
from lakehouse.bench import report
from lakehouse.bench.contenders import fresh, thrift_running
from lakehouse.bench.cpu import CoreMeter
from lakehouse.bench.latency import (
    DRAIN_DEADLINE,
    PROBE_PAUSE,
    SNAPSHOT_DEADLINE,
    Prober,
    by_table_line,
    caught_up_after,
    merge_on_read_project,
    pause_suffix,
    probe_pause_flag,
    probing,
    publish,
    start_service,
    stop_service,
    wait_health,
)
from lakehouse.bench.latency_feed import Sample
from lakehouse.bench.memory import PeakSampler
from lakehouse.bench.report import percentile
from lakehouse.cdc import chain, sql
from lakehouse.cdc.generate.tickit import EVENT, LISTING, Table
from lakehouse.cdc.load import connect, live_tables, load_unless_loaded
from lakehouse.cdc.workload import WorkloadOptions, WorkloadSummary, run_workload
from lakehouse.live_job import LIVE_KINDS

DATABASE = "bench_latency_live"
# One per database (PostgreSQL, MariaDB), with integer keys. A probe copies the
# table's first row: the workload deletes only rows nothing references, and a
# listing has no enforced reference, so a probe never blocks one of its deletes.
PROBE_TABLES = (EVENT, LISTING)
PROBE_BASE = 1_000_000_000  # probe keys: far above the generator's and the workload's


def visible_by_key(
    connection: thrift_client.Connection, table: str, samples: list[Sample]
) -> set[int]:
    """Indexes of the samples whose key is a live row of the bronze table."""
    column = samples[0].key_column
    keys = ", ".join(str(s.key) for s in samples)
    query = (
        f"select `{column}` from {DATABASE}.`{table}` "
        f"where `{column}` in ({keys}) and not _cdc_is_deleted"
    )
    try:
        found = {row[0] for row in connection.execute(query).rows}
    except thrift_client.QueryFailed:  # not registered yet
        return set()
    return {i for i, s in enumerate(samples) if s.key in found}


class ProbeWriter:
    """Commits probe rows: a copy of a table's first row under a new key, one transaction each."""

    def __init__(self, conf: Settings) -> None:
        self.connections = {t.name: connect(conf, t) for t in PROBE_TABLES}
        self.next_key = PROBE_BASE + max(self._probe_keys(t) for t in PROBE_TABLES)
        self.made: dict[str, list[int]] = {t.name: [] for t in PROBE_TABLES}

    def _probe_keys(self, table: Table) -> int:
        """The highest probe key an earlier run left (0 when none), so keys never clash."""
        dialect = sql.dialect_of(table)
        with self.connections[table.name].cursor() as cursor:
            cursor.execute(
                f"select coalesce(max({dialect.name(table.key)}), 0) from {dialect.table(table)}"
            )
            highest = int(cursor.fetchone()[0])
        self.connections[table.name].commit()
        return max(0, highest - PROBE_BASE + 1)

    def commit(self, table: Table) -> Sample:
        """One probe row, committed; the sample's time is when the commit returned."""
        dialect, connection = sql.dialect_of(table), self.connections[table.name]
        key, self.next_key = self.next_key, self.next_key + 1
        with connection.cursor() as cursor:
            cursor.execute(sql.select_all(dialect, table) + " limit 1")
            row = list(cursor.fetchone())
            row[table.column_names.index(table.key)] = key
            cursor.execute(sql.insert(dialect, table), row)
        connection.commit()
        self.made[table.name].append(key)
        return Sample(table.name, table.key, key, "", -1, time.monotonic())

    def delete_all(self) -> None:
        """Remove this run's probe rows, so the databases hold the workload's rows only."""
        for table in PROBE_TABLES:
            dialect, connection = sql.dialect_of(table), self.connections[table.name]
            with connection.cursor() as cursor:
                for key in self.made[table.name]:
                    cursor.execute(
                        f"delete from {dialect.table(table)} where {dialect.name(table.key)} = %s",
                        (key,),
                    )
            connection.commit()

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


def probe_while(
    running: threading.Thread, state_read: threading.Event, writer: ProbeWriter, prober: Prober
) -> None:
    """One probe a second, in turn in each database, while the workload runs.

    The first waits until the workload has read the databases, so it never
    counts a probe row as its own (and so never updates or deletes one).
    """
    while not state_read.wait(0.1):
        if not running.is_alive():
            return
    started, probes = time.monotonic(), 0
    while running.is_alive():
        prober.add(writer.commit(PROBE_TABLES[probes % len(PROBE_TABLES)]))
        probes += 1
        time.sleep(max(0.0, started + probes - time.monotonic()))


def drain(writer: ProbeWriter, prober: Prober, service: subprocess.Popen, health: Path) -> None:
    """A last probe per database seen (Debezium published everything before it), then a
    poll that finds nothing new (the service applied every table's backlog)."""
    for table in PROBE_TABLES:
        prober.add(writer.commit(table))
    ends = time.monotonic() + DRAIN_DEADLINE
    while prober.outstanding() and time.monotonic() < ends:
        time.sleep(0.5)
    wait_health(health, service, caught_up_after(now_text()), DRAIN_DEADLINE)


def live_counts(conf: Settings) -> dict[str, dict[str, int]]:
    """Per table: the database's own rows and bronze's live rows."""
    counts = {}
    for table in live_tables():
        dialect = sql.dialect_of(table)
        with closing(connect(conf, table)) as connection, connection.cursor() as cursor:
            cursor.execute(f"select count(*) from {dialect.table(table)}")
            source = int(cursor.fetchone()[0])
        query = f"select count(*) from {DATABASE}.`{table.name}` where not _cdc_is_deleted"
        bronze = int(thrift_client.execute(query, conf).rows[0][0])
        counts[table.name] = {"database": source, "bronze": bronze}
    return counts


def service_env(work: Path, merge_on_read: tuple[str, ...]) -> dict[str, str]:
    """The service's settings: the bench's database, the live sources, and with
    `merge_on_read` a project copy whose tables.yml makes those tables `mor`."""
    env = {"LAKEHOUSE_BRONZE_DATABASE": DATABASE, "LAKEHOUSE_SOURCE_KINDS": json.dumps(LIVE_KINDS)}
    if merge_on_read:
        env["LAKEHOUSE_PROJECT_DIR"] = str(merge_on_read_project(work, merge_on_read))
    return env


def measure(
    conf: Settings,
    work: Path,
    options: WorkloadOptions,
    log: Callable[[str], None],
    merge_on_read: tuple[str, ...] = (),
    probe_pause: float = PROBE_PAUSE,
) -> dict[str, Any]:
    """The service from Kafka, the workload and the probes; the figures of the streaming part."""
    health = work / "health.json"
    health.unlink(missing_ok=True)
    env = service_env(work, merge_on_read)
    if merge_on_read:
        log(f"merge-on-read bronze: {', '.join(merge_on_read)}")
    tables = ",".join(t.name for t in live_tables())
    writer = ProbeWriter(conf)
    try:
        with thrift_running(conf, log) as thrift_pid:
            service = start_service(work, health, env, tables)
            with PeakSampler([service.pid]) as memory, PeakSampler([thrift_pid]) as thrift:
                log("the service reads every topic from the start; waiting until it caught up")
                before = wait_health(health, service, caught_up_after(""), SNAPSHOT_DEADLINE)
                log(f"workload: {options.total:,} transactions at {options.rate:g}/s, probes 1/s")
                summaries: list[WorkloadSummary] = []
                state_read = threading.Event()
                workload = threading.Thread(
                    target=lambda: summaries.append(
                        run_workload(options, conf, lambda _: None, state_read)
                    )
                )
                with (
                    Prober(conf, visible_by_key, probe_pause) as prober,
                    CoreMeter([service.pid]) as service_cores,
                    CoreMeter([thrift_pid]) as thrift_cores,
                ):
                    workload.start()
                    probe_while(workload, state_read, writer, prober)
                    workload.join()
                    drain(writer, prober, service, health)
                after = json.loads(health.read_text())
                returncode = stop_service(service)
            counts = live_counts(conf)
    finally:
        writer.delete_all()
        writer.close()
    if not summaries:
        raise RuntimeError("the workload failed; see the service log and `lakehouse cdc logs`")
    return {
        "workload": {
            "transactions": summaries[0].transactions,
            "seconds": summaries[0].seconds,
            "changes": summaries[0].changes,
        },
        "events_applied": after["events"] - before["events"],
        "latencies": [round(x, 2) for x in prober.latencies],
        "by_table": prober.by_table(),
        "unseen": prober.unseen + prober.outstanding(),
        "probe_round_seconds": percentile(prober.rounds, 0.5),
        "probe_pause_seconds": prober.pause,
        "service_cores": service_cores.cores,
        "thrift_cores": thrift_cores.cores,
        "thrift_before": thrift_cores.warmth(),
        "service_exit": returncode,
        "service_peak_rss_bytes": memory.peak,
        "thrift_peak_rss_bytes": thrift.peak,
        "counts": counts,
    }


def figures(
    scale: float,
    options: WorkloadOptions,
    measured: dict[str, Any],
    merge_on_read: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Percentiles, throughput, memory and the count check, as the results JSON."""
    latencies = measured["latencies"]
    p50, p95, p99 = (percentile(latencies, f) for f in (0.5, 0.95, 0.99))
    differing = {n: c for n, c in measured["counts"].items() if c["database"] != c["bronze"]}
    workload = measured["workload"]
    return {
        "benchmark": "latency-live",
        "scale": scale,
        "rate": options.rate,
        "minutes": options.minutes,
        "merge_on_read": list(merge_on_read),
        "machine": report.machine(),
        "latency_seconds": {"p50": p50, "p95": p95, "p99": p99, "max": percentile(latencies, 1)},
        "latency_by_table": measured["by_table"],
        "samples": len(latencies),
        "unseen_samples": measured["unseen"],
        "transactions_per_second": round(workload["transactions"] / workload["seconds"], 1),
        "events_per_second": round(measured["events_applied"] / workload["seconds"], 1),
        "measured": {k: v for k, v in measured.items() if k not in ("latencies", "by_table")},
        "latencies": latencies,
        "differing_counts": differing,
        "valid": not differing and not measured["unseen"] and measured["service_exit"] == 0,
    }


def markdown(results: dict[str, Any]) -> str:
    lat, m = results["latency_seconds"], results["measured"]
    header = ["p50 s", "p95 s", "p99 s", "samples", "transactions/s", "events/s applied",
              "peak RSS ingest", "peak RSS Thrift"]  # fmt: skip
    row = [
        report.number(lat["p50"], 1),
        report.number(lat["p95"], 1),
        report.number(lat["p99"], 1),
        f"{results['samples']} ({results['unseen_samples']} unseen)",
        report.number(results["transactions_per_second"]),
        report.number(results["events_per_second"]),
        report.gib(m["service_peak_rss_bytes"]),
        report.gib(m["thrift_peak_rss_bytes"]),
    ]
    counts = "equal" if not results["differing_counts"] else results["differing_counts"]
    mor = results.get("merge_on_read")
    return "\n".join(
        [
            f"### bench latency --live --scale {results['scale']:g} --rate {results['rate']:g} "
            f"--minutes {results['minutes']:g}"
            + (f" --merge-on-read {','.join(mor)}" if mor else "")
            + probe_pause_flag(m),
            "",
            f"From a probe row's commit in PostgreSQL or MariaDB to the Thrift server showing it "
            f"(Debezium, Kafka, `lakehouse ingest --continuous`); {results['machine']['cpus']} "
            f"CPUs, load average {results['load_average_before']:.1f} at start; {probing(m)}",
            "",
            report.markdown_table(header, [row]),
            "",
            by_table_line(results["latency_by_table"]),
            f"- live rows, database vs bronze, every table: {counts}; "
            f"service stopped by SIGTERM with exit {m['service_exit']}",
            *([] if results["valid"] else ["- **figures void: counts, unseen probes or stop**"]),
        ]
    )


def chain_ready(
    bench: str, scale: float, log: Callable[[str], None]
) -> tuple[Settings, Path, bool]:
    """The live chain up and loaded (at `scale` unless an earlier load did: True when now),
    and the bench's work folder with an empty lake and logs."""
    conf = settings()
    work = conf.home / "bench" / bench
    for folder in ("lake", "logs"):
        fresh(work / folder)
    chain.up(conf, log=log)
    return conf, work, load_unless_loaded(scale, conf, log)


def run_live_latency_bench(
    scale: float,
    rate: float,
    minutes: float,
    results_dir: Path | None = None,
    log: Callable[[str], None] = print,
    merge_on_read: tuple[str, ...] = (),
    probe_pause: float = PROBE_PAUSE,
) -> dict[str, Any]:
    """The chain up and loaded, the service from Kafka, the workload and the probes; report.

    `merge_on_read`: the live tables the service writes as merge-on-read (a project copy);
    `probe_pause`: seconds between the prober's rounds.
    """
    started = time.monotonic()
    if unknown := sorted(set(merge_on_read) - {t.name for t in live_tables()}):
        names = ", ".join(t.name for t in live_tables())
        raise UserError(f"--merge-on-read: no live table {', '.join(unknown)} (they are {names})")
    load_before = report.machine()["load_average_1m"]
    conf, work, _ = chain_ready("latency-live", scale, log)
    options = WorkloadOptions(rate=rate, minutes=minutes)
    measured = measure(conf, work, options, log, merge_on_read, probe_pause)
    results = figures(scale, options, measured, merge_on_read)
    name = f"latency-live-scale{scale:g}-rate{rate:g}" + ("-mor" if merge_on_read else "")
    name += pause_suffix(probe_pause)
    path = publish(results, markdown, name, started, load_before, results_dir)
    lat = results["latency_seconds"]
    log(
        f"bench latency --live done in {results['seconds']:.0f}s: p50 {lat['p50']} s, "
        f"p95 {lat['p95']} s over {results['samples']} probes, "
        f"{results['events_per_second']:,.0f} events/s applied, "
        f"{'counts equal' if results['valid'] else 'figures VOID'}; {path}; "
        "the chain stays up (`lakehouse cdc down`)"
    )
    return results
