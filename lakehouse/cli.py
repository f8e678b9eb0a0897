"""The `lakehouse` command: argument parsing and output only; the work is in the modules."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ingestion.errors import UserError
from ingestion.preflight import storage_failure
from lakehouse import errors_text, output

EXIT_FAILED = 1
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def _stack(args: argparse.Namespace) -> int:
    from lakehouse import stack

    if args.action == "up":
        stack.up(log=output.say)
        return 0
    if args.action == "down":
        stack.down(log=output.say)
        return 0
    if args.action == "status":
        return 0 if stack.status(log=output.say) else 1
    output.say(stack.logs(name=args.service, lines=args.lines))
    return 0


def _stack_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("stack", help="the local Thrift server and catalog")
    parser.add_argument("action", choices=["up", "down", "status", "logs"])
    parser.add_argument("--service", choices=["catalog", "thrift"], help="logs of one service")
    parser.add_argument("-n", "--lines", type=int, default=50, help="log lines to show")
    parser.set_defaults(handler=_stack)


def _cdc_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "cdc", help="Debezium change data: the live chain (up, load, workload), generate, decode"
    )
    cdc = parser.add_subparsers(dest="cdc_command", required=True)
    from lakehouse.cdc.generate import command as generate

    generate_parser = cdc.add_parser("generate", help="write TICKIT CDC into a landing zone")
    generate.add_arguments(generate_parser)
    generate_parser.set_defaults(handler=generate.run)

    decode_parser = cdc.add_parser(
        "decode", help="print landing files' events as exact JSON lines (any format, no config)"
    )
    decode_parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="landing files or folders: local or s3://"
    )
    decode_parser.add_argument("--limit", type=int, help="print at most this many events per file")
    decode_parser.set_defaults(handler=_decode)
    from lakehouse.cdc import command as live

    live.add_commands(cdc)


def _decode(args: argparse.Namespace) -> int:
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    from ingestion.decode.single_file import decode_paths
    from ingestion.spark import build_session

    spark = build_session("lakehouse-cdc-decode")
    try:
        for line in decode_paths(spark, args.paths, args.limit):
            print(line)
    except (Py4JJavaError, PySparkException) as error:  # unreadable storage, not a bad line
        raise UserError(f"cdc decode failed: {errors_text.one_line(error)}") from error
    return 0


def _ingest(args: argparse.Namespace) -> int:
    from lakehouse import ingest_command

    return ingest_command.run_ingest(
        tables=args.tables.split(",") if args.tables else None,
        landing=args.landing,
        lake=args.lake,
        continuous=args.continuous,
        profile=args.profile,
    )


def _ingest_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "ingest", help="apply new landing files to the Hudi bronze tables, exactly once"
    )
    parser.add_argument("--tables", help="comma-separated bronze tables (default: all)")
    parser.add_argument("--landing", help="landing zone URI (default: from conf/lakehouse.yml)")
    parser.add_argument("--lake", help="lake URI (default: from conf/lakehouse.yml)")
    parser.add_argument(
        "--continuous",
        action="store_true",
        help="one long-running service: a micro-batch as soon as records arrive, until SIGTERM "
        "(intervals and health file: ingest_* in conf/lakehouse.yml)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print where each table's seconds went, per step"
    )
    parser.set_defaults(handler=_ingest)


def _maintain(args: argparse.Namespace) -> int:
    from lakehouse import maintain_command

    return maintain_command.run_maintain(args.tables.split(",") if args.tables else None)


def _maintain_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "maintain",
        help="compact merge-on-read bronze and cluster the changelogs, off the ingest path",
    )
    parser.add_argument("--tables", help="comma-separated bronze tables (default: all)")
    parser.set_defaults(handler=_maintain)


def _dbt(args: argparse.Namespace) -> int:
    from lakehouse.dbt_wrapper import run_dbt

    dbt_args = [arg for arg in args.dbt_args if arg != "--"]
    return run_dbt(dbt_args, target=args.target).returncode


def _dbt_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "dbt", help="run dbt with the project's profiles and Spark settings: lakehouse dbt -- build"
    )
    parser.add_argument("--target", help="dbt target (default: local)")
    parser.add_argument("dbt_args", nargs=argparse.REMAINDER, help="arguments for dbt")
    parser.set_defaults(handler=_dbt)


def _dbt_sources(args: argparse.Namespace) -> int:
    from lakehouse import dbt_sources

    path = dbt_sources.SOURCES_FILE
    found = dbt_sources.check(path) if args.check else None
    if found is not None and not found.up_to_date:
        held = f"; bronze holds {', '.join(found.missing)}" if found.missing else ""
        output.error(f"{path} differs from conf/tables.yml{held}: run `lakehouse dbt-sources`")
        return 1
    if found is not None or dbt_sources.write(path):
        output.say(f"{path.relative_to(dbt_sources.PROJECT_DIR)} is up to date")
        return 0
    output.say(f"wrote {path.relative_to(dbt_sources.PROJECT_DIR)} from conf/tables.yml and bronze")
    return 0


def _dbt_sources_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "dbt-sources",
        help="write the dbt sources' tables, keys, columns and types from conf/tables.yml "
        "and the columns bronze holds",
    )
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when the file is stale"
    )
    parser.set_defaults(handler=_dbt_sources)


def _tables(args: argparse.Namespace) -> int:
    from ingestion.config import TABLES_FILE
    from ingestion.settings import settings
    from lakehouse import table_entry

    write_to = TABLES_FILE if args.write else None
    if args.include:
        if args.table or args.key or args.name:
            raise UserError("--include selects tables by pattern: leave out --table, --key, --name")
        selection = table_entry.add_tables(
            settings(), args.source, tuple(args.include), tuple(args.exclude or ()), write_to
        )
        added, left_out = selection.added, selection.left_out
    elif args.table:
        key = tuple(k.strip() for k in args.key.split(",") if k.strip()) if args.key else ()
        added = (
            table_entry.add_table(settings(), args.source, args.table, args.name, key, write_to),
        )
        left_out = ()
    else:
        raise UserError("which tables? --table SCHEMA.TABLE, or --include PATTERN (regex)")
    _print_added(added, left_out)
    return 0


def _print_added(added, left_out: tuple[str, ...]) -> None:
    """The entries (stdout), their warnings and what was left out (stderr), a summary line."""
    for table in added:
        for warning in table.warnings:
            output.error_console.print(f"warning: {warning}", markup=False, soft_wrap=True)
        print(table.text, end="")
    for reason in left_out:
        output.error_console.print(f"left out: {reason}", markup=False, soft_wrap=True)
    written = [t.entry.name for t in added if t.written]
    if written:
        output.say(f"appended {len(written)} table(s) to {added[0].written}: {', '.join(written)}")
    elif not added:
        output.say("no table to add: every selected table is configured or left out")


def _tables_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("tables", help="the table config, conf/tables.yml")
    tables = parser.add_subparsers(dest="tables_command", required=True)
    add = tables.add_parser(
        "add",
        help="print a table's conf/tables.yml entry, read from its source database's catalog",
    )
    add.add_argument("--source", required=True, help="the live chain's source: ems or ecomm")
    add.add_argument("--table", help="SCHEMA.TABLE (PostgreSQL) or DATABASE.TABLE (MariaDB)")
    add.add_argument(
        "--include",
        action="append",
        help="every table whose SCHEMA.TABLE this regular expression matches in full, as "
        "Debezium's table.include.list (repeatable; tables already configured are kept)",
    )
    add.add_argument("--exclude", action="append", help="tables to leave out, by the same rule")
    add.add_argument("--name", help="the bronze table's name (default: the source table's)")
    add.add_argument("--key", help="record key columns, for a table without a primary key")
    add.add_argument("--write", action="store_true", help="append the entry to conf/tables.yml")
    add.set_defaults(handler=_tables)


def _status(args: argparse.Namespace) -> int:
    from lakehouse import status

    lake = status.lake_status(names=args.tables)
    if args.json:
        print(lake.to_json())
    else:
        output.console.print(status.status_table(lake))
        for line in status.summary_lines(lake):
            output.say(line)
    return status.EXIT_BEHIND if lake.behind else 0


def _status_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "status",
        help="how far each bronze table is behind its source: lag, backlog, the service "
        "(exit 5 when a change waits longer than status_behind_seconds)",
    )
    parser.add_argument("--tables", nargs="+", help="only these tables (default: all served)")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.set_defaults(handler=_status)


def _reconcile(args: argparse.Namespace) -> int:
    from ingestion.settings import settings
    from ingestion.spark import build_session
    from lakehouse import reconcile

    conf = settings()
    spark = build_session("lakehouse-reconcile", conf, conf.run_dir / "lakehouse-reconcile.log")
    result = reconcile.reconcile(spark, conf, args.tables, output.say)
    record = reconcile.write_record(conf, result)
    reconcile.write_table(spark, conf, result)
    output.say(reconcile.summary_line(result, record))
    return 1 if result.differing else 0


def _reconcile_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reconcile",
        help="bronze's rows against the source database's own, key by key (exit 1 on a difference)",
    )
    parser.add_argument("--tables", nargs="+", help="only these tables (default: all served)")
    parser.set_defaults(handler=_reconcile)


def _resnapshot(args: argparse.Namespace) -> int:
    from ingestion.config import load_document, select_tables
    from ingestion.discovery import served_tables
    from ingestion.settings import settings
    from ingestion.spark import build_session
    from lakehouse import resnapshot

    conf = settings()
    served = served_tables(conf, load_document(database=conf.bronze_database)).tables
    (table,) = select_tables(served, [args.table])
    resnapshot.check_request(table, args.snapshot_from)
    spark = build_session("lakehouse-resnapshot", conf, conf.run_dir / "lakehouse-resnapshot.log")
    rebuilt = resnapshot.resnapshot(spark, conf, table, args.snapshot_from, output.say)
    output.say(resnapshot.summary_line(rebuilt))
    return 0


def _resnapshot_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "resnapshot",
        help="rebuild a bronze table from a fresh snapshot (after a change bronze cannot follow)",
    )
    parser.add_argument("table", help="the bronze table")
    parser.add_argument(
        "--from", dest="snapshot_from", metavar="FOLDER",
        help="landing files: a landing zone holding the fresh snapshot's sink files "
        "(FOLDER/topics/<topic>/); Kafka tables take theirs from the connector",
    )  # fmt: skip
    parser.set_defaults(handler=_resnapshot)


def _run(args: argparse.Namespace) -> int:
    if args.live:
        from lakehouse import live_job

        if args.change_batches is not None:
            raise UserError("--change-batches is for generated CDC: --live runs a workload instead")

        return live_job.run_live_job(scale=args.scale, log=output.say)
    from lakehouse import main_job

    return main_job.run_main_job(
        scale=args.scale, change_batches=args.change_batches, log=output.say
    )


def _run_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run", help="the main job: generate CDC, ingest, dbt build, dbt docs generate"
    )
    parser.add_argument("--scale", type=float, default=0.01, help="TICKIT scale (1 = ~425K rows)")
    parser.add_argument(
        "--change-batches",
        type=int,
        help="change batches generated after the snapshot (default: as `cdc generate`)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="on the real chain: PostgreSQL + MariaDB -> Debezium -> Kafka (`lakehouse cdc up`)",
    )
    parser.set_defaults(handler=_run)


def _jobs(args: argparse.Namespace) -> int:
    from lakehouse.scheduler.jobs_file import load_jobs
    from lakehouse.scheduler.lock import JobLockedError
    from lakehouse.scheduler.run import EXIT_FAILED, EXIT_LOCKED, run_job

    if args.action == "list":
        for job in load_jobs().values():
            steps = " -> ".join(step.name for step in job.steps)
            output.say(f"{job.name:8} {job.schedule:12} {steps}  ({job.description})")
        return 0
    if not args.name:
        raise UserError("which job? `lakehouse jobs run NAME` (see `lakehouse jobs list`)")
    try:
        record = run_job(args.name, log=output.say)
    except JobLockedError as error:
        output.error(str(error))
        return EXIT_LOCKED
    return 0 if record.status == "success" else EXIT_FAILED


def _jobs_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "jobs", help="scheduled jobs from conf/jobs.yml: lakehouse jobs run daily"
    )
    parser.add_argument("action", choices=["list", "run"])
    parser.add_argument("name", nargs="?", help="the job to run")
    parser.set_defaults(handler=_jobs)


def _docs(args: argparse.Namespace) -> int:
    from lakehouse.services import docs_site

    if args.action == "build":
        docs_site.build()
        output.say(f"docs site built in {docs_site.settings().dbt_target_path}")
    elif args.action == "serve":
        docs_site.serve(log=output.say)
    else:
        docs_site.stop(log=output.say)
    return 0


def _docs_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "docs", help="the dbt documentation site: build, serve (127.0.0.1), stop"
    )
    parser.add_argument("action", choices=["build", "serve", "stop"])
    parser.set_defaults(handler=_docs)


def _dashboard(args: argparse.Namespace) -> int:
    from lakehouse.services import dashboard_server

    if args.action == "up":
        dashboard_server.up(log=output.say)
        return 0
    if args.action == "down":
        dashboard_server.down(log=output.say)
        return 0
    return 0 if dashboard_server.status(log=output.say) else 1


def _dashboard_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "dashboard", help="the Streamlit dashboard over the marts (127.0.0.1): up, down, status"
    )
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.set_defaults(handler=_dashboard)


def _bench(args: argparse.Namespace) -> int:
    if args.bench_command == "chart":
        from lakehouse.bench.chart import draw

        output.say(f"chart: {draw(args.results_file)}")
        return 0
    from lakehouse.bench.one_at_a_time import one_bench_at_a_time

    with one_bench_at_a_time(args.bench_command):
        return _run_bench(args)


def _run_bench(args: argparse.Namespace) -> int:
    if args.bench_command == "ingest":
        from lakehouse.bench.ingest_bench import chosen_peers, run_ingest_bench

        peers = chosen_peers(args.peers)
        ran = run_ingest_bench(
            args.scale, args.change_batches, args.results, output.say, args.jobs, peers
        )
        return 0 if ran.valid else 1
    if args.bench_command == "latency" and args.live:
        from lakehouse.bench.latency import PROBE_PAUSE
        from lakehouse.bench.live_latency import run_live_latency_bench

        if args.extra_tables:
            raise UserError("--extra-tables run on landing files: run them without --live")

        results = run_live_latency_bench(
            args.scale, args.rate, args.minutes, args.results, output.say,
            tuple(filter(None, args.merge_on_read.split(","))),
            PROBE_PAUSE if args.probe_pause is None else args.probe_pause,
        )  # fmt: skip
    elif args.bench_command == "soak":
        from lakehouse.bench.soak import SoakOptions, run_soak_bench

        options = SoakOptions(
            args.scale, args.rate, args.minutes, args.job_minutes, args.session_seconds,
            args.dbt_select,
        )  # fmt: skip
        results = run_soak_bench(options, args.results, output.say)
    elif args.bench_command == "tables":
        from lakehouse.bench.many_tables import run_tables_bench

        results = run_tables_bench(args.tables, args.rounds, args.results, output.say)
    elif args.bench_command == "reconcile":
        from lakehouse.bench.reconcile_bench import run_reconcile_bench

        results = run_reconcile_bench(args.scale, args.results, output.say)
    elif args.bench_command == "floor":
        from lakehouse.bench.floor_bench import run_floor_bench

        results = run_floor_bench(args.scale, args.rounds, args.results, output.say)
    elif args.bench_command == "latency":
        from lakehouse.bench.latency import PROBE_PAUSE, LatencyOptions, run_latency_bench

        options = LatencyOptions(
            args.scale, args.rate, args.minutes, args.extra_tables, args.idle_extras,
            tuple(filter(None, args.merge_on_read.split(","))),
            PROBE_PAUSE if args.probe_pause is None else args.probe_pause,
        )  # fmt: skip
        results = run_latency_bench(options, args.results, output.say)
    else:
        from lakehouse.bench.dbt_bench import run_dbt_bench

        results = run_dbt_bench(args.scale, args.select, args.exclude, args.results, output.say)
    return 0 if results["valid"] else 1


def _bench_parser(commands: argparse._SubParsersAction) -> None:

    parser = commands.add_parser(
        "bench",
        help="benchmarks: ingest (ours vs Delta, Iceberg, Hudi, plain Spark), floor, dbt, latency, "
        "soak, tables, reconcile; chart draws a results file",
    )
    bench = parser.add_subparsers(dest="bench_command", required=True)
    ingest = bench.add_parser("ingest", help="ingestion speed and memory, side by side")
    ingest.add_argument("--scale", type=float, default=1.0, help="TICKIT scale (1 = ~425K rows)")
    ingest.add_argument(
        "--change-batches", type=int, default=5, help="change batches after the snapshot"
    )
    ingest.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="contenders at once (default 1; more makes a quick smoke run, not comparable figures)",
    )
    ingest.add_argument(
        "--peers",
        default="all",
        help="peers to run beside ours and the plain-Spark ceiling: all (default), none, or a "
        "comma-separated list of peer names (a name not known is refused with the list)",
    )
    dbt = bench.add_parser("dbt", help="full vs incremental dbt build after a 1%% change batch")
    dbt.add_argument("--scale", type=float, default=1.0, help="TICKIT scale (1 = ~425K rows)")
    dbt.add_argument("--select", help="dbt node selection (default: the whole project)")
    dbt.add_argument("--exclude", help="dbt nodes to leave out, e.g. 'resource_type:test'")
    tables = bench.add_parser(
        "tables", help="a batch's cost per table: one change in one of N small tables, then in all"
    )
    tables.add_argument("--tables", type=int, default=100, help="small tables served (default 100)")
    tables.add_argument("--rounds", type=int, default=3, help="rounds of the two batches")
    proof = bench.add_parser(
        "reconcile", help="`lakehouse reconcile` on the live chain against one ingest of its tables"
    )
    proof.add_argument("--scale", type=float, default=1.0, help="TICKIT scale (1 = ~425K rows)")
    floor = bench.add_parser(
        "floor",
        help="ours against the plain-Spark ceiling and Hudi's own floor (the changelog and "
        "bronze bulk inserts of rows not decoded), alternated in one session",
    )
    floor.add_argument("--scale", type=float, default=1.0, help="TICKIT scale (1 = ~425K rows)")
    floor.add_argument("--rounds", type=int, default=3, help="alternated rounds (default 3)")
    latency = bench.add_parser(
        "latency", help="continuous ingestion: seconds from a landed change to the Thrift server"
    )
    latency.add_argument("--scale", type=float, default=1.0, help="TICKIT scale (1 = ~425K rows)")
    latency.add_argument(
        "--rate",
        type=int,
        default=1000,
        help="change events landed per second (with --live: workload transactions per second)",
    )
    latency.add_argument("--minutes", type=float, default=5.0, help="minutes of changes")
    latency.add_argument(
        "--extra-tables",
        type=int,
        default=0,
        help="small tables served beside TICKIT, one of them changed in every flush (default 0)",
    )
    latency.add_argument(
        "--idle-extras",
        action="store_true",
        help="the --extra-tables take their snapshot row only and never change",
    )
    latency.add_argument(
        "--merge-on-read",
        default="",
        metavar="TABLES",
        help="comma-separated TICKIT tables the service writes as merge-on-read (a project copy)",
    )
    latency.add_argument(
        "--probe-pause",
        type=float,
        metavar="SECONDS",
        help="seconds the prober waits between its rounds of queries (default 1)",
    )
    latency.add_argument(
        "--live",
        action="store_true",
        help="from a commit in PostgreSQL or MariaDB through Debezium and Kafka (the live chain)",
    )
    soak = _soak_parser(bench)
    chart = bench.add_parser("chart", help="draw a benchmark's results JSON as a PNG beside it")
    chart.add_argument("results_file", type=Path, help="a results JSON (.lakehouse/bench-results)")
    chart.set_defaults(handler=_bench)
    for sub in (ingest, dbt, tables, proof, floor, latency, soak):
        sub.add_argument(
            "--results", type=Path, help="results folder (default: .lakehouse/bench-results)"
        )
        sub.set_defaults(handler=_bench)


def _soak_parser(bench: argparse._SubParsersAction) -> argparse.ArgumentParser:
    soak = bench.add_parser(
        "soak",
        help="hours of the continuous service with every user of the Thrift server: memory, "
        "new-session answers, batches and latency per window, drawn",
    )
    soak.add_argument("--scale", type=float, default=0.1, help="TICKIT scale (default 0.1)")
    soak.add_argument("--rate", type=int, default=200, help="change events landed per second")
    soak.add_argument("--minutes", type=float, default=180.0, help="minutes of changes")
    soak.add_argument(
        "--job-minutes",
        type=float,
        default=10.0,
        help="minutes between two hourly-job dbt builds (a second ingest runs between them)",
    )
    soak.add_argument(
        "--session-seconds", type=float, default=10.0, help="seconds between new sessions"
    )
    soak.add_argument("--dbt-select", help="the dbt build's selection (default: every model)")
    return soak


PARSERS: list[Callable[[argparse._SubParsersAction], None]] = [
    _run_parser,
    _stack_parser,
    _cdc_parser,
    _ingest_parser,
    _maintain_parser,
    _dbt_parser,
    _dbt_sources_parser,
    _tables_parser,
    _jobs_parser,
    _status_parser,
    _reconcile_parser,
    _resnapshot_parser,
    _docs_parser,
    _dashboard_parser,
    _bench_parser,
]


class _Parser(argparse.ArgumentParser):
    """The parser of `lakehouse` and of each (sub)command it has: all take -v and --debug.

    `add_subparsers` makes its commands' parsers of this class too, so any
    command added takes them after its name (`lakehouse ingest --debug`) as
    well as before it. There they are SUPPRESS by default: a command's parser
    leaves what `lakehouse --debug ingest` set alone.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
            help="debug logging of the project's own modules",
        )  # fmt: skip
        self.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS,
            help="debug logging, and full traces (with the root cause's) on errors",
        )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lakehouse", description=__doc__)
    parser.set_defaults(verbose=False, debug=False)
    commands = parser.add_subparsers(dest="command", required=True)
    for add in PARSERS:
        add(commands)
    return parser


# Loggers --verbose and --debug turn to DEBUG; every other (py4j, urllib3,
# botocore, ...) stays at WARNING: py4j alone logs each JVM call at DEBUG.
PROJECT_LOGGERS = ("ingestion", "lakehouse")


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.NOTSET)


def _save_trace(error: BaseException) -> Path:
    """Keep the full trace of an unexpected failure in a file the one-line message names.

    After Python's trace, the Java root cause's own stack trace (a Spark
    failure's trace is the outermost Java exception's, its root far below).
    """
    folder = Path(tempfile.gettempdir()) / "lakehouse"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"error-{os.getpid()}.log"
    path.write_text("".join(traceback.format_exception(error)) + _root_section(error))
    return path


def _root_section(error: BaseException) -> str:
    trace = errors_text.root_trace(error)
    return f"\nThe root cause, {errors_text.one_line(error)}:\n{trace}" if trace else ""


def _one_line(error: BaseException) -> str:
    return errors_text.one_line(error)


def _print_debug(error: BaseException) -> None:
    """--debug: the project's trace, the Java root cause's, then the one line."""
    traceback.print_exception(error)
    if section := _root_section(error):
        print(section, file=sys.stderr, end="")
    output.error(errors_text.error_text(error))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors are one line on stderr (traces only with --debug).

    The line names the root cause (a Spark failure's is deep in its Java
    cause chain: `lakehouse.errors_text`). Exit codes: 0 success, 1 an
    unexpected failure, 2 a problem the user can fix (settings, table config,
    stack, paths), 3 records quarantined (`lakehouse ingest`), 4 another job
    holds the lock (`lakehouse jobs run`); `lakehouse reconcile` exits 1 when a
    table differs from its source; 5 a table is behind past
    `status_behind_seconds` (`lakehouse status`).
    """
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose or args.debug)
    try:
        return int(args.handler(args) or 0)
    except UserError as error:
        if args.debug:
            _print_debug(error)
        else:
            output.error(str(error))
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        output.error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as error:
        failure = storage_failure(error)
        if args.debug:
            _print_debug(error)
            return EXIT_FAILED if failure is None else EXIT_USER_ERROR
        trace = _save_trace(error)
        if failure is not None:
            output.error(f"{failure} (full trace in {trace})")
            return EXIT_USER_ERROR
        output.error(f"{_one_line(error)} (full trace in {trace}; rerun with --debug to print it)")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
