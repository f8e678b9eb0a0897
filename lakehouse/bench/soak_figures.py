"""The soak benchmark's figures: per-window tables, trends and the goals, from its records.

Kept apart from the driver (soak.py) so a results JSON can be tabled and
judged again without running anything. A run is cut into windows of equal
length; its first and last thirds stand for the issue's first and last hours
(they are those hours in a 180-minute run). Memory growth over a stretch is
the least-squares line's rise over it, relative to its start: a saw-tooth's
last point says little, its trend says whether it climbs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from lakehouse.bench import report
from lakehouse.bench.jvm_counters import grown
from lakehouse.bench.report import percentile

MIB = 1024**2

WINDOWS = 6
SESSION_P99_GOAL = 2.0  # seconds: a new session's select 1, every window
MEMORY_GROWTH_GOAL = 0.05  # at most, over the last third
TREND_GOAL = 1.15  # last third over first third: batch seconds and latency
LIVE_HEAP_GOAL = 0.5  # the Thrift server's live heap, of its limit


@dataclass
class Minute:
    """One minute of the processes that run throughout: RSS and heap after GC, in bytes.

    After GC means the minute's lowest reading (the saw-tooth's trough): the
    counters are read every second, so a collection shows as a drop.
    """

    minute: int
    rss: dict[str, int] = field(default_factory=dict)
    old_after_gc: dict[str, int] = field(default_factory=dict)
    heap_after_gc: dict[str, int] = field(default_factory=dict)
    heap_max: dict[str, int] = field(default_factory=dict)


def growth(points: list[tuple[float, float]]) -> float | None:
    """The least-squares line's rise over the points' span, relative to its value at the start."""
    if len(points) < 2:
        return None
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = fmean(xs), fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    if spread == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in points) / spread
    start = my + slope * (min(xs) - mx)
    return None if start <= 0 else round(slope * (max(xs) - min(xs)) / start, 4)


def _within(t: float, start: float, end: float) -> bool:
    return start <= t < end


def _window(records: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    """One window's figures: sessions, latency, batches, jobs, memory."""
    sessions = [s for t, s in records["sessions"] if _within(t, start, end)]
    answered = [s for s in sessions if s is not None]
    latencies = [s for t, s in records["latencies"] if _within(t, start, end)]
    batches = [s for t, s, _ in records["batches"] if _within(t, start, end)]
    minutes = [m for m in records["per_minute"] if _within(m.minute * 60, start, end)]
    jobs = [j for j in records["jobs"] if _within(j["started"], start, end)]
    return {
        "from_minute": round(start / 60, 1),
        "to_minute": round(end / 60, 1),
        "sessions": len(sessions),
        "sessions_unanswered": len(sessions) - len(answered),
        "session_select1_p99": percentile(answered, 0.99),
        "latency_p50": percentile(latencies, 0.5),
        "latency_p95": percentile(latencies, 0.95),
        "batches": len(batches),
        "batch_seconds_mean": round(fmean(batches), 2) if batches else None,
        "jobs": len(jobs),
        "jobs_failed": sum(1 for j in jobs if j["returncode"] != 0),
        "rss": _means(m.rss for m in minutes),
        "old_after_gc": _means(m.old_after_gc for m in minutes),
    }


def _means(readings) -> dict[str, int]:
    values: dict[str, list[int]] = {}
    for reading in readings:
        for name, value in reading.items():
            values.setdefault(name, []).append(value)
    return {name: int(fmean(v)) for name, v in values.items()}


def windows(records: dict[str, Any], seconds: float, count: int = WINDOWS) -> list[dict]:
    width = seconds / count
    return [_window(records, i * width, (i + 1) * width) for i in range(count)]


def _ratio(last: float | None, first: float | None) -> float | None:
    return None if not first or last is None else round(last / first, 3)


def trends(records: dict[str, Any], seconds: float) -> dict[str, Any]:
    """First third against last third, and memory growth over the last third."""
    first, last = (_window(records, a * seconds / 3, (a + 1) * seconds / 3) for a in (0, 2))
    tail = [m for m in records["per_minute"] if m.minute * 60 >= 2 * seconds / 3]
    memory: dict[str, float | None] = {}
    for kind in ("rss", "old_after_gc"):
        names = sorted({name for m in tail for name in getattr(m, kind)})
        for name in names:
            points = [(m.minute, getattr(m, kind)[name]) for m in tail if name in getattr(m, kind)]
            memory[f"{name} {kind.replace('_', ' ')}"] = growth(points)
    heaps = [
        (m.heap_after_gc["thrift"], m.heap_max["thrift"]) for m in tail if "thrift" in m.heap_max
    ]
    return {
        "batch_seconds_last_vs_first": _ratio(
            last["batch_seconds_mean"], first["batch_seconds_mean"]
        ),
        "latency_p50_last_vs_first": _ratio(last["latency_p50"], first["latency_p50"]),
        "memory_growth_last_third": memory,
        "thrift_live_heap_of_limit": round(max(u / m for u, m in heaps), 3) if heaps else None,
    }


def goals(results: dict[str, Any]) -> dict[str, bool]:
    """The issue's three goals, each judged from the run's own figures."""
    trend = results["trends"]
    p99s = [w["session_select1_p99"] for w in results["windows"]]
    growths = list(trend["memory_growth_last_third"].values())
    ratios = (trend["batch_seconds_last_vs_first"], trend["latency_p50_last_vs_first"])
    live = trend["thrift_live_heap_of_limit"]
    return {
        "select1_p99_within_2s_every_window": all(
            p is not None and p <= SESSION_P99_GOAL for p in p99s
        )
        and all(w["sessions_unanswered"] == 0 for w in results["windows"]),
        "final_state_exact": bool(results["state"].get("exact")),
        "memory_grows_under_5pc_in_last_third": bool(growths)
        and all(g is not None and g < MEMORY_GROWTH_GOAL for g in growths),
        "thrift_live_heap_under_half_its_limit": live is not None and live < LIVE_HEAP_GOAL,
        "batches_and_latency_within_15pc": all(r is not None and r <= TREND_GOAL for r in ratios),
    }


def _mib(value: int | None) -> str:
    return "-" if not value else f"{value / 1024**2:,.0f}"


def window_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-window table: the users' figures, then each long-running process's memory."""
    names = sorted({n for w in results["windows"] for n in w["rss"]})
    jvms = sorted({n for w in results["windows"] for n in w["old_after_gc"]})
    header = [
        *("minutes", "sessions (unanswered)", "select 1 p99 s", "latency p50 / p95 s"),
        *("batches", "batch s", "jobs (failed)"),
        *(f"{n} RSS MiB" for n in names),
        *(f"{n} old after GC MiB" for n in jvms),
    ]
    rows = [
        [
            f"{w['from_minute']:g}-{w['to_minute']:g}",
            f"{w['sessions']} ({w['sessions_unanswered']})",
            report.number(w["session_select1_p99"], 2),
            f"{report.number(w['latency_p50'], 1)} / {report.number(w['latency_p95'], 1)}",
            str(w["batches"]),
            report.number(w["batch_seconds_mean"], 1),
            f"{w['jobs']} ({w['jobs_failed']})",
            *(_mib(w["rss"].get(n)) for n in names),
            *(_mib(w["old_after_gc"].get(n)) for n in jvms),
        ]
        for w in results["windows"]
    ]
    return header, rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def _grown_line(histograms: dict[str, list]) -> str:
    """The Thrift server's classes whose live bytes grew most from early in the run to its end."""
    if not histograms.get("early") or not histograms.get("late"):
        return "- Thrift server's live classes: no histograms taken"
    parts = [
        f"{name} +{size / MIB:,.0f} MiB ({count:+,})"
        for name, size, count in grown(histograms["early"], histograms["late"], top=8)
    ]
    return "- Thrift server's live classes grown most: " + (", ".join(parts) or "none")


def markdown(results: dict[str, Any]) -> str:
    header, rows = window_rows(results)
    trend, checks = results["trends"], results["goals"]
    memory = ", ".join(f"{n} {_percent(g)}" for n, g in trend["memory_growth_last_third"].items())
    return "\n".join(
        [
            f"### bench soak --scale {results['scale']:g} --rate {results['rate']} "
            f"--minutes {results['minutes']:g}",
            "",
            f"{results['machine']['cpus']} CPUs, load average "
            f"{results['load_average_before']:.1f} at start; the continuous service, the "
            f"prober, a new session every {results['session_seconds']:g} s, "
            f"{results['jobs_summary']}.",
            "",
            report.markdown_table(header, rows),
            "",
            f"- last third against the first: batch seconds "
            f"{report.ratio(trend['batch_seconds_last_vs_first'])}, latency p50 "
            f"{report.ratio(trend['latency_p50_last_vs_first'])}",
            f"- memory growth over the last third (least-squares): {memory}",
            f"- Thrift server's live heap, highest in the last third: "
            f"{_percent(trend['thrift_live_heap_of_limit']).lstrip('+')} of its limit",
            f"- final state: {results['state'].get('summary', '-')}",
            _grown_line(results.get("thrift_histograms") or {}),
            "- goals: "
            + ", ".join(f"{name} {'met' if ok else 'NOT met'}" for name, ok in checks.items()),
        ]
    )
