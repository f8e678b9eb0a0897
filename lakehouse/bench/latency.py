"""`lakehouse bench latency`: how long a landed change takes to be queryable, under load.

The stack is up (catalog + Thrift server); `lakehouse ingest --continuous`
runs in its own measured process; after the snapshot is in, a writer lands
the generator's change batches at `rate` events per second, cut into small
files as a sink flushes them (latency_feed.py), and a prober asks the Thrift
server, for one sampled change per flush, whether the change is visible: the
bronze row of its key comes from its file or a later one. Latency is from the
file's landing to the first answer that shows it (an upper bound by at most
one probe round, reported). At the end the backlog is drained, the service
stopped with SIGTERM (it must exit 0) and the final state checked key by key
against the generator's; figures of a run whose state is wrong are void.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ingestion.config import load_tables
from ingestion.continuous import now_text
from ingestion.errors import UserError
from ingestion.settings import Settings, settings
from ingestion.sources.landing import parse_file_name
from lakehouse import thrift_client
from lakehouse.bench import chart, report
from lakehouse.bench.contenders import fresh, process_env, python_module, thrift_running
from lakehouse.bench.cpu import CoreMeter
from lakehouse.bench.extra_tables import ExtraTables
from lakehouse.bench.ingest_results import StateCheck
from lakehouse.bench.latency_feed import Record, Sample, SinkWriter, change_stream, sample_of
from lakehouse.bench.measure import run_measured
from lakehouse.bench.memory import PeakSampler
from lakehouse.bench.report import percentile
from lakehouse.bench.staging import Landing, open_landing, stage
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.output import console
from lakehouse.project_copy import project_copy
from lakehouse.stack import tail

DATABASE = "bench_latency"
SNAPSHOT_DEADLINE = 1800
DRAIN_DEADLINE = 900
# In the run's work folder, beside its health file (health.json).
SERVICE_LOG = Path("logs") / "service.log"
PROBE_TIMEOUT = 900.0  # a sample not visible by then counts as unseen
# Between probe rounds: asked without a pause, the Thrift server's answers
# took most of a core from the two the service is measured on (decision 0026).
PROBE_PAUSE = 1.0
# Snapshot rows: about 424,000 per unit of scale, plus the date table's fixed rows.
ROWS_AT_SCALE_1, FIXED_ROWS = 424_000, 400
# The generator's default mix (30% inserts, some of several rows; 15% deletes),
# measured from its output: events per planned change, live rows gained per change.
EVENTS_PER_CHANGE, NET_GROWTH_PER_CHANGE = 1.06, 0.25
MAX_CHANGE_FRACTION = 0.25
PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class LatencyOptions:
    """What a latency run streams: TICKIT's size, the rate, how long, small tables beside it."""

    scale: float
    rate: int
    minutes: float
    extra_tables: int = 0
    idle_extras: bool = False
    merge_on_read: tuple[str, ...] = ()  # TICKIT tables the service's copy makes `mor`
    probe_pause: float = PROBE_PAUSE  # seconds between the prober's rounds

    def extras(self, work: Path) -> ExtraTables | None:
        if not self.extra_tables:
            return None
        return ExtraTables(self.extra_tables, work / "project", changing=not self.idle_extras)

    def project(self, work: Path, extras: ExtraTables | None) -> Path | None:
        """The project copy the service runs in when the run changes its tables; else None."""
        root = extras.make_project() if extras else None
        if self.merge_on_read:
            return merge_on_read_project(work, self.merge_on_read, root)
        return root

    @property
    def name(self) -> str:
        extra = f"-extra{self.extra_tables}" if self.extra_tables else ""
        extra += "-idle" if self.extra_tables and self.idle_extras else ""
        extra += "-mor" if self.merge_on_read else ""
        return f"latency-scale{self.scale:g}-rate{self.rate}{extra}{pause_suffix(self.probe_pause)}"


def merge_on_read_project(work: Path, tables: tuple[str, ...], root: Path | None = None) -> Path:
    """`root` (else a copy of the project's conf/ under `work`) with these tables `mor`."""
    root = root or project_copy(work / "project", ["conf"])
    set_table_type(root / "conf" / "tables.yml", tables, "mor")
    return root


def set_table_type(path: Path, tables: tuple[str, ...], table_type: str) -> None:
    """Rewrite a copy's tables.yml with `table_type` on these tables."""
    document = yaml.safe_load(path.read_text())
    for name in tables:
        document["tables"][name]["table_type"] = table_type
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def generate_changes(out: Path, scale: float, events: int) -> Landing:
    """TICKIT CDC whose change batches hold about `events` events in all.

    No redelivered duplicates and no late events: a sampled change is then
    visible exactly when its key's row comes from its file or a later one.
    The CDC an earlier run generated with the same options is reused (at
    `--scale 0.1`, 70 minutes at 200 events/s take about 13 minutes to make).
    """
    batches, fraction = change_sizing(int(ROWS_AT_SCALE_1 * scale) + FIXED_ROWS, events)
    if _generated_with(out, scale, batches, fraction):
        return open_landing(out)
    fresh(out)
    options = GenerateOptions(
        out=str(out),
        scale=scale,
        change_batches=batches,
        change_fraction=fraction,
        duplicate_fraction=0.0,
        late_updates_per_topic=0,
    )
    generate(options)
    return open_landing(out)


def change_sizing(rows: int, events: int) -> tuple[int, float]:
    """Change batches and the fraction of live rows each changes, for about `events` in all.

    A batch changes `fraction` of the live rows, and its inserts outnumber its
    deletes, so every batch is larger than the one before: sized as if the
    table stayed put, a stream of many near-whole-table batches comes out
    several times too long. The fraction is capped so the growth stays small,
    and the batches are counted with it.
    """
    fraction = min(MAX_CHANGE_FRACTION, max(events / rows, 0.001))
    batches = 1
    while _stream_events(rows, fraction, batches) < events:
        batches += 1
    low, high = 0.001, fraction  # the fraction that makes `batches` batches hold `events`
    for _ in range(40):
        middle = (low + high) / 2
        if _stream_events(rows, middle, batches) < events:
            low = middle
        else:
            high = middle
    return batches, round(high, 6)


def _stream_events(rows: int, fraction: float, batches: int) -> float:
    """Change events in `batches` batches of `fraction` of the live rows, the rows growing."""
    growth = 1 + fraction * NET_GROWTH_PER_CHANGE
    return fraction * rows * sum(growth**k for k in range(batches)) * EVENTS_PER_CHANGE


def _generated_with(out: Path, scale: float, batches: int, fraction: float) -> bool:
    """Whether `out` holds a complete generation of these options (its manifest is written last)."""
    try:
        options = json.loads((out / "_manifest.json").read_text())["options"]
    except (OSError, ValueError, KeyError):
        return False
    wanted = {"scale": scale, "change_batches": batches, "change_fraction": fraction}
    fixed = {"duplicate_fraction": 0.0, "late_updates_per_topic": 0}
    return all(options.get(name) == value for name, value in {**wanted, **fixed}.items())


def visible_from_file(
    connection: thrift_client.Connection,
    table: str,
    samples: list[Sample],
    database: str = DATABASE,
) -> set[int]:
    """Indexes of the samples whose key's bronze row comes from their file or a later one."""
    column = samples[0].key_column
    keys = ", ".join(repr(s.key) if isinstance(s.key, str) else str(s.key) for s in samples)
    sql = (
        f"select `{column}`, _cdc_source_file from {database}.`{table}` "
        f"where `{column}` in ({keys})"
    )
    try:
        rows = connection.execute(sql).rows
    except thrift_client.QueryFailed:  # not registered yet
        return set()
    offsets = {}
    for key, source_file in rows:
        parsed = parse_file_name(source_file or "", samples[0].topic)
        offsets[key] = parsed.offset if parsed else -1
    return {i for i, s in enumerate(samples) if offsets.get(s.key, -1) >= s.file_offset}


Visibility = Callable[[thrift_client.Connection, str, list[Sample]], set[int]]


class Prober:
    """Asks the Thrift server, every round, which pending samples are visible yet.

    `visible` says which of a table's samples show: by landing file here, by key
    for the live chain (live_latency.py). A sample's `landed_at` is when its
    change was made (file landed, or source transaction committed). The prober
    keeps one connection open, as a dashboard does (a session per query made
    the server, which shares the machine with the service, do more work; see
    `thrift_client.Connection`), and opens it again after losing it.
    """

    def __init__(
        self, conf: Settings, visible: Visibility = visible_from_file, pause: float = PROBE_PAUSE
    ) -> None:
        self.conf = conf
        self.visible = visible
        self.pause = pause
        self.pending: list[Sample] = []
        self.seen: list[tuple[str, float]] = []  # (table, seconds) of every sample seen
        self.landed_at: list[float] = []  # when each seen sample's change was made, in order
        self.unseen = 0
        self.rounds: list[float] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="prober", daemon=True)
        self.connection: thrift_client.Connection | None = None

    def add(self, sample: Sample) -> None:
        with self.lock:
            self.pending.append(sample)

    @property
    def latencies(self) -> list[float]:
        return [seconds for _, seconds in self.seen]

    def by_table(self) -> dict[str, dict[str, float | int | None]]:
        """Each table's p50 and p95 and its share of the samples: a slow small table shows."""
        tables: dict[str, list[float]] = {}
        for table, seconds in self.seen:
            tables.setdefault(table, []).append(seconds)
        return {
            table: {
                "samples": len(values),
                "p50": percentile(values, 0.5),
                "p95": percentile(values, 0.95),
            }
            for table, values in sorted(tables.items(), key=lambda item: -len(item[1]))
        }

    def outstanding(self) -> int:
        with self.lock:
            return len(self.pending)

    def probe_once(self) -> None:
        started = time.monotonic()
        with self.lock:
            pending = list(self.pending)
        by_table: dict[str, list[Sample]] = {}
        for sample in pending:
            by_table.setdefault(sample.table, []).append(sample)
        seen: set[Sample] = set()
        for table, samples in by_table.items():
            visible = self._ask(table, samples)
            now = time.monotonic()
            for index in visible:
                self.seen.append((table, now - samples[index].landed_at))
                self.landed_at.append(samples[index].landed_at)
                seen.add(samples[index])
        now = time.monotonic()
        expired = {s for s in pending if s not in seen and now - s.landed_at > PROBE_TIMEOUT}
        with self.lock:
            self.pending = [s for s in self.pending if s not in seen and s not in expired]
        self.unseen += len(expired)
        if pending:
            self.rounds.append(time.monotonic() - started)

    def _ask(self, table: str, samples: list[Sample]) -> set[int]:
        """The visible samples of a table; none when the server cannot be asked this round."""
        from thrift.transport.TTransport import TTransportException

        try:
            if self.connection is None:
                self.connection = thrift_client.Connection(self.conf)
            return self.visible(self.connection, table, samples)
        except (thrift_client.ThriftUnreachable, TTransportException, OSError):
            self._close()  # the server restarting or the connection lost: ask again next round
            return set()

    def _close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(Exception):
                self.connection.close()
            self.connection = None

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.probe_once()
                self.stop.wait(self.pause)
        finally:
            self._close()

    def __enter__(self) -> Prober:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def start_service(
    work: Path, health: Path, env: dict[str, str] | None = None, tables: str = ""
) -> subprocess.Popen:
    """`lakehouse ingest --continuous` over the bench's landing zone and lake."""
    environment = {
        **process_env(),
        "LAKEHOUSE_LANDING": str(work / "landing"),
        "LAKEHOUSE_LAKE": str(work / "lake"),
        "LAKEHOUSE_BRONZE_DATABASE": DATABASE,
        "LAKEHOUSE_INGEST_HEALTH_FILE": str(health),
        **(env or {}),
    }
    log = (work / SERVICE_LOG).open("wb")
    return subprocess.Popen(
        python_module(
            "lakehouse.cli", "ingest", "--continuous", *(["--tables", tables] if tables else [])
        ),
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=_stopped_with_parent,
    )


def _stopped_with_parent() -> None:
    """In the service's process: SIGTERM when the bench ends, however it ends.

    A bench that fails or is interrupted mid-stream would otherwise leave the
    service ingesting into its work folder (Linux's PR_SET_PDEATHSIG).
    """
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def exited(service: subprocess.Popen, log: Path) -> str:
    """The service's exit and the last line it printed (its one-line error), where the log is:
    the next run's set-up empties the logs folder."""
    last = tail(log, 1).strip() or "no output"
    return f"the ingestion service exited with {service.returncode}: {last} (log {log})"


def wait_health(
    health: Path, service: subprocess.Popen, ready: Callable[[dict], bool], deadline: float
) -> dict:
    """Poll the health file until `ready(health)`; fail if the service exits or time is up."""
    ends = time.monotonic() + deadline
    while True:
        try:
            state = json.loads(health.read_text())
        except (OSError, ValueError):
            state = {}
        # Only this service's own file: a previous run's may still lie there.
        if state.get("pid") == service.pid and ready(state):
            return state
        if service.poll() is not None:
            raise RuntimeError(exited(service, health.parent / SERVICE_LOG))
        if time.monotonic() > ends:
            raise RuntimeError(f"the ingestion service did not get there within {deadline} s")
        time.sleep(0.5)


def land(
    stream: Iterator[Record],
    writer: SinkWriter,
    prober: Prober,
    rate: int,
    keys: dict[str, tuple[str, tuple[str, ...]]],
) -> dict[str, float]:
    """Flush `rate` records every second until every record is landed.

    The stream is read as it is landed, never held whole: a soak's records
    (hours of changes, with their schemas) outgrow the machine's memory.
    """
    started = time.monotonic()
    landed = flushes = 0
    while chunk := list(itertools.islice(stream, rate)):
        starts = writer.flush(chunk)
        now = time.monotonic()
        landed += len(chunk)
        flushes += 1
        record = writer.pick(chunk)
        if record is not None:
            table, key = keys[record.topic]
            offset = starts[(record.topic, record.partition)]
            if (sample := sample_of(record, table, key, offset, now)) is not None:
                prober.add(sample)
        # The sink's flush interval: one flush per second, on the second.
        time.sleep(max(0.0, started + flushes - time.monotonic()))
    return {"records": landed, "seconds": round(time.monotonic() - started, 2), "flushes": flushes}


def stop_service(service: subprocess.Popen) -> int:
    """SIGTERM, as a scheduler stops it: the service finishes its commits and exits 0."""
    service.send_signal(signal.SIGTERM)
    try:
        return service.wait(timeout=DRAIN_DEADLINE)
    except subprocess.TimeoutExpired:
        os.kill(service.pid, signal.SIGKILL)
        return service.wait()


def verify(landing: Landing, work: Path, database: str = DATABASE) -> dict[str, Any]:
    """Bronze against the generator's expected state, by `bench ingest`'s checker."""
    command = python_module(
        "lakehouse.bench.verify",
        *("--engine", "hudi", "--lake", str(work / "lake"), "--database", database),
        *("--expected", str(landing.root / "_expected")),
    )
    check = StateCheck.from_result(
        run_measured(command, process_env(), work / "logs" / "verify.log").result
    )
    return {"ours_matches_expected": check.matches, "difference": check.difference()}


def caught_up_after(moment: str) -> Callable[[dict], bool]:
    """The service polled and found nothing new after `moment` (health times are ISO UTC)."""
    return lambda health: bool(health.get("caught_up_at")) and health["caught_up_at"] > moment


def stream_and_drain(
    work: Path,
    landing: Landing,
    service: subprocess.Popen,
    prober: Prober,
    rate: int,
    extras: ExtraTables | None = None,
) -> dict[str, Any]:
    """Land the change records; wait for the service to catch up and the prober to see them."""
    keys = {t.topic: (t.name, t.key) for t in load_tables(database=DATABASE).values()}
    stream = change_stream(landing)
    if extras is not None:
        keys |= extras.keys()
        stream = extras.interleave(stream, rate)
    started = time.monotonic()
    landed = land(stream, SinkWriter(work / "landing"), prober, rate, keys)
    drained = wait_health(
        work / "health.json", service, caught_up_after(now_text()), DRAIN_DEADLINE
    )
    stream_seconds = time.monotonic() - started
    ends = time.monotonic() + PROBE_TIMEOUT
    while prober.outstanding() and time.monotonic() < ends:
        time.sleep(0.5)
    return {
        **landed,
        "stream_records": landed["records"],
        "stream_seconds": round(stream_seconds, 2),
        "health": drained,
    }


def measure(
    conf: Settings,
    landing: Landing,
    work: Path,
    options: LatencyOptions,
    extras: ExtraTables | None,
    thrift_pid: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The service, the writer and the prober (the stack up); the streaming part's figures."""
    rate, minutes = options.rate, options.minutes
    health = work / "health.json"
    health.unlink(missing_ok=True)
    stage(landing, 0, work / "landing")
    project = options.project(work, extras)
    env = {"LAKEHOUSE_PROJECT_DIR": str(project)} if project else None
    if options.merge_on_read:
        log(f"merge-on-read bronze: {', '.join(options.merge_on_read)}")
    if extras is not None:
        SinkWriter(work / "landing").flush(extras.snapshot())
        changes = "one change of one of them in every flush" if extras.changing else "idle"
        log(f"{extras.count} small tables more, {changes}")
    service = start_service(work, health, env)
    with PeakSampler([service.pid]) as memory, PeakSampler([thrift_pid]) as thrift:
        log(f"snapshot: {landing.events(0):,} events, waiting for the service to apply it")
        before = wait_health(health, service, caught_up_after(""), SNAPSHOT_DEADLINE)
        log(f"landing change records at {rate}/s, about {minutes:g} min")
        with (
            Prober(conf, pause=options.probe_pause) as prober,
            CoreMeter([service.pid]) as service_cores,
            CoreMeter([thrift_pid]) as thrift_cores,
        ):
            streamed = stream_and_drain(work, landing, service, prober, rate, extras)
        returncode = stop_service(service)
    log(f"landed {streamed['records']:,} records in {streamed['seconds']:.0f} s")
    return {
        **streamed,
        "change_events_applied": streamed["health"]["events"] - before["events"],
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
    }


def figures(options: LatencyOptions, measured: dict, state: dict) -> dict:
    """Percentiles, throughput, memory, the goals and the state check, as the results JSON."""
    latencies = measured["latencies"]
    sustained = measured["change_events_applied"] / measured["stream_seconds"]
    p50, p95, p99 = (percentile(latencies, f) for f in (0.5, 0.95, 0.99))
    exact = state.get("ours_matches_expected") and state.get("extra_tables_match", True)
    valid = bool(exact) and measured["service_exit"] == 0
    return {
        "benchmark": "latency",
        "scale": options.scale,
        "rate": options.rate,
        "minutes": options.minutes,
        "extra_tables": options.extra_tables,
        "idle_extras": options.idle_extras,
        "merge_on_read": list(options.merge_on_read),
        "machine": report.machine(),
        "latency_seconds": {"p50": p50, "p95": p95, "p99": p99, "max": percentile(latencies, 1)},
        "latency_by_table": measured["by_table"],
        "samples": len(latencies),
        "unseen_samples": measured["unseen"],
        "landed_events_per_second": round(measured["records"] / max(measured["seconds"], 1e-9), 1),
        "sustained_events_per_second": round(sustained, 1),
        "measured": {k: v for k, v in measured.items() if k not in ("latencies", "by_table")},
        "latencies": latencies,
        "state": state,
        "valid": valid,
        "goals": {
            "p50_within_10s": p50 is not None and p50 <= 10,
            "p95_within_20s": p95 is not None and p95 <= 20,
            "p50_within_15s": p50 is not None and p50 <= 15,
            "p95_within_30s": p95 is not None and p95 <= 30,
            "sustains_1000_events_per_second": sustained >= 1000,
        },
    }


def markdown(results: dict) -> str:
    lat, m = results["latency_seconds"], results["measured"]
    rows = [
        [
            report.number(lat["p50"], 1),
            report.number(lat["p95"], 1),
            report.number(lat["p99"], 1),
            f"{results['samples']} ({results['unseen_samples']} unseen)",
            report.number(results["landed_events_per_second"]),
            report.number(results["sustained_events_per_second"]),
            report.gib(m["service_peak_rss_bytes"]),
            report.gib(m["thrift_peak_rss_bytes"]),
        ]
    ]
    header = ["p50 s", "p95 s", "p99 s", "samples", "landed ev/s", "sustained ev/s",
              "peak RSS ingest", "peak RSS Thrift"]  # fmt: skip
    machine = results["machine"]
    return "\n".join(
        [
            f"### {command_line(results)}",
            "",
            f"{m['records']:,} change records landed in {m['flushes']} flushes; "
            f"{machine['cpus']} CPUs, load average {results['load_average_before']:.1f} at start "
            f"(shared machine); latency from a file's landing to the Thrift server showing its "
            f"change; {probing(m)}",
            "",
            report.markdown_table(header, rows),
            "",
            by_table_line(results["latency_by_table"]),
            f"- state: bronze = generator's expected state: "
            f"{'yes' if results['state'].get('ours_matches_expected') else 'NO'}; "
            f"{extra_tables_state(results['state'])}"
            f"service stopped by SIGTERM with exit {m['service_exit']}",
            *([] if results["valid"] else ["- **figures void: state check or stop failed**"]),
        ]
    )


def probing(measured: dict[str, Any]) -> str:
    """How often the prober asked (the resolution), the cores each side used meanwhile, and
    how warm the Thrift server was when the changes began."""
    text = (
        f"probe round {measured['probe_round_seconds']} s,"
        f" then a pause of {measured['probe_pause_seconds']:g} s (the resolution)."
        f" While the changes streamed and drained, the service used"
        f" {measured['service_cores']} cores, the Thrift server (answering the prober)"
        f" {measured['thrift_cores']}."
    )
    before = measured.get("thrift_before") or {}
    if before.get("uptime_seconds") is not None:
        text += (
            f" The Thrift server had been up {before['uptime_seconds']:,} s and used"
            f" {before['cpu_seconds']:,} CPU seconds before them (one started for the run"
            f" answers slower until its JIT has compiled the read path)."
        )
    return text


def command_line(results: dict[str, Any]) -> str:
    """The command that makes these results again."""
    line = (
        f"bench latency --scale {results['scale']:g} --rate {results['rate']} "
        f"--minutes {results['minutes']:g}"
    )
    if extra := results.get("extra_tables"):
        line += f" --extra-tables {extra}" + (" --idle-extras" if results["idle_extras"] else "")
    if mor := results.get("merge_on_read"):
        line += f" --merge-on-read {','.join(mor)}"
    return line + probe_pause_flag(results["measured"])


def pause_suffix(pause: float) -> str:
    """A results file name's `-pauseS` when the prober paused other than the default."""
    return f"-pause{pause:g}" if pause != PROBE_PAUSE else ""


def probe_pause_flag(measured: dict[str, Any]) -> str:
    """` --probe-pause S` when a run's prober paused other than the default, else nothing."""
    pause = measured["probe_pause_seconds"]
    return f" --probe-pause {pause:g}" if pause != PROBE_PAUSE else ""


def extra_tables_state(state: dict[str, Any]) -> str:
    """The small tables' check, when the run served some."""
    if "extra_tables_match" not in state:
        return ""
    matches = "yes" if state["extra_tables_match"] else "NO"
    return f"every small table's row its last change: {matches}; "


def by_table_line(by_table: dict[str, dict[str, Any]]) -> str:
    """Each table's samples, p50 and p95, most sampled first, as one list item."""
    parts = [
        f"{table} {row['samples']} "
        f"({report.number(row['p50'], 1)} / {report.number(row['p95'], 1)})"
        for table, row in by_table.items()
    ]
    return "- by table, samples (p50 / p95 s): " + ", ".join(parts)


def publish(
    results: dict[str, Any],
    markdown_of: Callable[[dict[str, Any]], str],
    name: str,
    started: float,
    load_before: float,
    results_dir: Path | None,
) -> Path:
    """The run's seconds and starting load into the results, written and printed as Markdown."""
    results["seconds"] = round(time.monotonic() - started, 1)
    results["load_average_before"] = load_before
    text = markdown_of(results)
    path = report.write(name, results, text, results_dir)
    results["results_file"] = str(path)
    console.print(text, markup=False, soft_wrap=True)
    return path


def run_latency_bench(
    options: LatencyOptions,
    results_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Generate, run the service under the writer and the prober, verify, report."""
    started = time.monotonic()
    if unknown := sorted(set(options.merge_on_read) - set(load_tables(database=DATABASE))):
        raise UserError(f"--merge-on-read: no table {', '.join(unknown)} in conf/tables.yml")
    load_before = report.machine()["load_average_1m"]
    conf = settings()
    work = conf.home / "bench" / "latency"
    for folder in ("landing", "lake", "logs"):
        fresh(work / folder)
    scale, rate, minutes = options.scale, options.rate, options.minutes
    log(f"generating TICKIT CDC, scale {scale}, about {int(rate * minutes * 60):,} change events")
    # Deletes add a tombstone record each: about 15% more records than events.
    landing = generate_changes(work / "source", scale, int(rate * minutes * 60 / 1.15))
    # The stack stays up for the state check: it reads bronze through the catalog.
    extras = options.extras(work)
    with thrift_running(conf, log) as thrift_pid:
        measured = measure(conf, landing, work, options, extras, thrift_pid, log)
        log("final state check")
        state = verify(landing, work)
        if extras is not None:
            state |= extras.check(conf, DATABASE)
    results = figures(options, measured, state)
    path = publish(results, markdown, options.name, started, load_before, results_dir)
    picture = chart.draw(path)
    lat = results["latency_seconds"]
    log(
        f"bench latency done in {results['seconds']:.0f}s: p50 {lat['p50']} s, p95 {lat['p95']} s, "
        f"p99 {lat['p99']} s, sustained {results['sustained_events_per_second']:,.0f} events/s, "
        f"state {'ok' if results['valid'] else 'WRONG (figures void)'}; {path}, {picture}"
    )
    return results
