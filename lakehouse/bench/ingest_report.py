"""The Markdown of a `bench ingest` run: one row per contender, then ours over each peer.

docs/performance.md quotes this text as printed.
"""

from __future__ import annotations

from lakehouse.bench import report
from lakehouse.bench.ingest_results import Contender, IngestBenchResults, Ratio

HEADER = [
    "contender",
    "snapshot s",
    "snapshot events/s",
    "changes s",
    "changes events/s",
    "change batch s (mean / max)",
    "read s",
    "peak RSS",
    "files written",
    "MiB written",
    "state",
]
MIB = 1024**2


def _state(contender: Contender) -> str:
    if contender.name == "ceiling" and contender.ran:
        return "every event written"
    if contender.ran:
        return "= expected"
    return f"**{contender.status}** (below)"


def _row(c: Contender) -> list[str]:
    if not c.phases:
        return [c.label, *(["-"] * (len(HEADER) - 2)), _state(c)]
    s, ch = c.snapshot, c.changes
    latency = (
        f"{report.number(ch.latency_mean_seconds, 1)} / {report.number(ch.latency_max_seconds, 1)}"
    )
    return [
        c.label,
        report.number(s.seconds, 1),
        _rate(s.events_per_second),
        report.number(ch.seconds, 1),
        _rate(ch.events_per_second),
        latency,
        report.number(c.state.read_seconds, 1) if c.state else "-",
        report.gib(c.peak_rss_bytes),
        f"{c.files_written:,}",
        report.number(c.bytes_written / MIB, 1),
        _state(c),
    ]


def _rate(value: float | None) -> str:
    """Events per second, with a decimal where the figure is small (tiny scales)."""
    return report.number(value, 1 if value is not None and value < 10 else 0)


def _ratio_line(label: str, r: Ratio) -> str:
    if r.void:
        return f"- ours/{label}: void (below)"
    reads = "" if r.read is None else f"; reads {report.ratio(r.read)} (their read s / ours)"
    maintained = (
        ""
        if r.changes_maintained is None
        else f", {report.ratio(r.changes_maintained)} with ours' maintenance amortized"
    )
    return (
        f"- ours/{label}: snapshot {report.ratio(r.snapshot)}, changes {report.ratio(r.changes)}"
        f"{maintained} (events/s){reads}; peak RSS {report.ratio(r.peak_rss)} (ours / theirs)"
    )


def _maintenance_lines(ours: Contender) -> list[str]:
    """Ours' maintenance after the batches, and the reads on either side of it."""
    done = ours.maintenance
    if done is None:
        return []
    before = ours.state_before_maintenance
    reads = (
        f"; reads {report.number(before.read_seconds, 1)} s before it, "
        f"{report.number(ours.state.read_seconds, 1) if ours.state else '-'} s after"
        if before
        else ""
    )
    return [
        f"- ours' maintenance (`lakehouse maintain`: merge-on-read tables compacted, changelogs "
        f"clustered, when due) after the last batch: {report.number(done.seconds, 1)} s, "
        f"{done.files_written:,} files written{reads}; change events/s with it amortized: "
        f"{_rate(ours.changes_maintained_events_per_second)}. The peers run no table "
        "services beyond their writes' own (no Iceberg `rewrite_data_files`, no Delta "
        "`OPTIMIZE`)."
    ]


def _floor_line(ours: Contender) -> list[str]:
    """Ours' merge-on-read reads against Hudi's cheaper reads of the same files."""
    sides = [("before maintenance", ours.state_before_maintenance), ("after it", ours.state)]
    figures = [(when, state.floor_reads()) for when, state in sides if state]
    shown = [
        f"{when}: snapshot {report.number(f['snapshot'], 1)} s, unmerged rows "
        f"{report.number(f['unmerged'], 1)} s, base files alone "
        f"{report.number(f['base_files'], 1)} s"
        for when, f in figures
        if f
    ]
    if not shown:
        return []
    return [
        "- ours' merge-on-read tables read Hudi's cheaper ways, neither exact (the format's "
        f"floor for their snapshot read): {'; '.join(shown)}"
    ]


def _goal_lines(goals: dict) -> list[str]:
    if goals.get("best_peer") is None:
        return ["- goals: no valid peer to compare with"]
    yes = {True: "met", False: "NOT met", None: "void"}
    return [
        f"- goals against the best peer by change events/s ({goals['best_peer']}): changes "
        f">= 1.5x: {yes[goals['changes_1_5x_best_peer']]}; snapshot >= 1.0x the fastest peer: "
        f"{yes[goals['snapshot_1x_best_peer']]}; peak RSS <= its: "
        f"{yes[goals['peak_rss_at_most_best_peer']]}"
    ]


def markdown(results: IngestBenchResults) -> str:
    events, machine, spark = results.events, results.machine, results.spark
    lines = [
        f"### bench ingest --scale {results.scale} --change-batches {results.change_batches}",
        "",
        f"{events['snapshot']:,} snapshot events, {events['changes']:,} change events "
        f"({results.format} JSON); {machine['cpus']} CPUs, {machine['memory_gib']} GiB, "
        f"load average {results.load_average_before:.1f} at start and "
        f"{results.load_average_after:.1f} at the end (shared machine); Spark {spark['master']}, "
        f"driver {spark['driver_memory']}, {spark['parallel_tables']} tables at once, "
        f"Hudi {spark['hudi']}; peers' jars {', '.join(spark['bench_jars'])}. Seconds are "
        "process wall time (JVM start included); read s is the time to read every table's "
        "live rows in full, session already up.",
        "",
        report.markdown_table(HEADER, [_row(c) for c in results.contenders]),
        "",
    ]
    labels = {c.name: c.label for c in results.contenders}
    lines += [_ratio_line(labels[name], r) for name, r in results.ratios.items()]
    lines += _maintenance_lines(results.contender("ours"))
    lines += _floor_line(results.contender("ours"))
    lines += [f"- {c.label} {c.status}: {c.reason}" for c in results.contenders if not c.ran]
    lines += _goal_lines(results.goals)
    if results.jobs > 1:
        lines.append(
            f"- **not comparable: {results.jobs} contenders ran at once** (--jobs, a smoke run)"
        )
    if not results.valid:
        lines.append("- **figures void: ours' final state check failed**")
    return "\n".join(lines)


def summary_line(results: IngestBenchResults) -> str:
    ours = results.contender("ours")
    ran = [c.name for c in results.contenders if c.ran]
    return (
        f"bench ingest done in {results.seconds:.0f}s: ours snapshot "
        f"{_rate(ours.snapshot.events_per_second)} ev/s, changes "
        f"{_rate(ours.changes.events_per_second)} ev/s; valid: {', '.join(ran)}; "
        f"state {'ok' if results.valid else 'WRONG (figures void)'}; {results.results_file}"
    )
