"""The one-line error names the root cause of a Spark failure, deep in its Java cause chain.

Stand-ins for py4j's Java objects check the chain's walk (cycles, the JVM
gone, messages without text); one real Spark failure checks it end to end.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from lakehouse import cli, errors_text
from lakehouse.bench.one_at_a_time import one_bench_at_a_time

from .java_fakes import ANCIENT, FakeThrowable, Py4JJavaError, SparkUpgradeException, hudi_failure


def test_a_spark_failure_is_named_by_its_root_cause_and_its_fix() -> None:
    root = FakeThrowable("org.apache.spark.SparkUpgradeException", ANCIENT)
    line = errors_text.one_line(Py4JJavaError(hudi_failure(root)))
    assert "\n" not in line
    assert line.startswith(
        "SparkUpgradeException: [INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME] "
        "You may get a different result due to the upgrading to Spark >= 3.0 (root cause of "
        "Py4JJavaError: An error occurred while calling o3232.save, "
        "via HoodieException > SparkException > SparkException); fix: "
    )
    assert "Spark session that ran this lacks" in line
    assert "spark.sql.parquet.datetimeRebaseModeInWrite=CORRECTED" in line
    assert cli._one_line(Py4JJavaError(hudi_failure(root))) == line


def test_the_fix_names_the_settings_spark_names_for_reads_and_int96() -> None:
    read = FakeThrowable(
        "org.apache.spark.SparkUpgradeException",
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME] You may get a different "
        'result ... set "spark.sql.parquet.datetimeRebaseModeInRead" to "CORRECTED"',
    )
    assert errors_text.fix_for(errors_text.java_chain(read)[0]).startswith(
        "fix: the Spark session that ran this lacks "
        "spark.sql.parquet.datetimeRebaseModeInRead=CORRECTED ("
    )
    int96 = FakeThrowable(
        "org.apache.spark.SparkUpgradeException",
        ANCIENT.replace("datetimeRebaseModeInWrite", "int96RebaseModeInWrite"),
    )
    both = (
        "spark.sql.parquet.int96RebaseModeInWrite=CORRECTED and "
        "spark.sql.parquet.datetimeRebaseModeInWrite=CORRECTED ("
    )
    assert both in errors_text.one_line(Py4JJavaError(int96))
    other = FakeThrowable("java.io.FileNotFoundException", "File /x does not exist")
    assert errors_text.fix_for(errors_text.java_chain(other)[0]) == ""


def test_a_cycle_a_null_message_and_the_jvm_gone_end_the_walk() -> None:
    first = FakeThrowable("java.lang.RuntimeException", "outer")
    second = FakeThrowable("java.lang.IllegalStateException", None, first)
    first.cause = second  # initCause can make a loop
    assert [c.kind for c in errors_text.java_chain(first)] == [
        "RuntimeException",
        "IllegalStateException",
    ]
    assert errors_text.one_line(Py4JJavaError(first)).startswith(
        "IllegalStateException (root cause of Py4JJavaError: "
    )
    root = FakeThrowable("java.io.IOException", "gone with the JVM")
    middle = FakeThrowable("org.apache.spark.SparkException", "Job aborted", root)
    root.broken = True
    assert errors_text.one_line(Py4JJavaError(middle)).startswith(
        "SparkException: Job aborted (root cause of Py4JJavaError"
    )
    assert errors_text.root_trace(Py4JJavaError(middle)).startswith(
        "org.apache.spark.SparkException: Job aborted\n\tat org.example.Frame.f0("
    )


def test_errors_without_a_cause_read_as_before_and_python_causes_are_followed() -> None:
    assert errors_text.one_line(ValueError("bad\nsecond line")) == "ValueError: bad"
    assert errors_text.one_line(KeyboardInterrupt()) == "KeyboardInterrupt"
    try:
        try:
            {}["sales"]
        except KeyError as missing:
            raise RuntimeError("no table") from missing
    except RuntimeError as error:
        line = errors_text.one_line(error)
    assert line == "KeyError: 'sales' (root cause of RuntimeError: no table)"
    origin = FakeThrowable("org.apache.spark.SparkUpgradeException", ANCIENT)
    converted = SparkUpgradeException(origin)  # PySpark's own: the origin is itself, no root
    assert errors_text.one_line(converted).startswith("SparkUpgradeException: [INCONSISTENT")
    assert "root cause of" not in errors_text.one_line(converted)
    origin.cause = FakeThrowable("java.time.DateTimeException", "year 1000")
    assert errors_text.one_line(converted).startswith(
        "DateTimeException: year 1000 (root cause of SparkUpgradeException: [INCONSISTENT_"
    )


def test_the_saved_trace_ends_with_the_java_root_causes_stack_trace(monkeypatch, tmp_path):
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(tmp_path))
    root = FakeThrowable("org.apache.spark.SparkUpgradeException", ANCIENT)
    try:
        raise Py4JJavaError(hudi_failure(root))
    except Py4JJavaError as error:
        text = cli._save_trace(error).read_text()
    assert text.index("Traceback") < text.index("The root cause, SparkUpgradeException: [INCONS")
    assert text.rstrip().endswith(
        "org.apache.spark.SparkUpgradeException: " + ANCIENT + "\n"
        "\tat org.example.Frame.f0(Frame.java:0)\n"
        "\tat org.example.Frame.f1(Frame.java:1)\n"
        "\tat org.example.Frame.f2(Frame.java:2)"
    )


def test_a_real_spark_failure_names_its_java_root_cause(spark, tmp_path: Path) -> None:
    """Parquet refusing an ancient date: Py4JJavaError > job > task > SparkUpgradeException."""
    from py4j.protocol import Py4JJavaError as RealPy4JJavaError

    session = spark.newSession()  # its own SQL settings: the shared session's stay as they are
    for setting in ("datetimeRebaseModeInWrite", "int96RebaseModeInWrite"):
        session.conf.set(f"spark.sql.parquet.{setting}", "EXCEPTION")
    frame = session.sql("SELECT DATE'1000-01-01' AS day")
    try:
        frame.write.parquet(str(tmp_path / "ancient"))
    except RealPy4JJavaError as error:
        failure = error
    else:
        raise AssertionError("Spark wrote a date before 1582 with the rebase mode EXCEPTION")
    assert len(errors_text.java_chain(failure.java_exception)) > 1
    line = errors_text.one_line(failure)
    assert line.startswith(
        "SparkUpgradeException: [INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME] "
    ), line
    assert "(root cause of Py4JJavaError: An error occurred while calling o" in line
    assert "spark.sql.parquet.datetimeRebaseModeInWrite=CORRECTED" in line
    trace = errors_text.root_trace(failure)
    assert trace.startswith("org.apache.spark.SparkUpgradeException: [INCONSISTENT_"), trace
    assert "\n\tat org.apache.spark." in trace


def _lakehouse_in_a_process(argv: list[str], after: str) -> subprocess.CompletedProcess:
    """`lakehouse.cli.main(argv)` in a process of its own (its logging untouched by pytest)."""
    script = f"import logging, sys\nfrom lakehouse import cli\ncode = cli.main({argv!r})\n{after}"
    script += "\nsys.exit(code)\n"
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_debug_and_verbose_are_taken_after_the_command_too() -> None:
    parser = cli.build_parser()
    for argv in (["ingest", "--tables", "x", "--debug"], ["--debug", "ingest", "--tables", "x"]):
        assert parser.parse_args(argv).debug, argv
    assert parser.parse_args(["jobs", "run", "daily", "-v"]).verbose
    assert parser.parse_args(["-v", "jobs", "run", "daily"]).verbose
    assert parser.parse_args(["cdc", "generate", "--out", "x", "--debug"]).debug
    plain = parser.parse_args(["bench", "floor"])
    assert not plain.debug and not plain.verbose
    # dbt's own flags after `--` are dbt's.
    passed = parser.parse_args(["dbt", "--", "build", "--debug"])
    assert not passed.debug and passed.dbt_args == ["--", "build", "--debug"]


def test_debug_prints_the_trace_and_the_projects_debug_logs_not_py4js() -> None:
    noise = (
        "logging.getLogger('py4j.clientserver').debug('PY4J-CALL')\n"
        "logging.getLogger('urllib3.connectionpool').info('URLLIB3-INFO')\n"
        "logging.getLogger('ingestion.spark').debug('PROJECT-DEBUG')\n"
        "logging.getLogger('lakehouse.stack').debug('LAKEHOUSE-DEBUG')\n"
    )
    done = _lakehouse_in_a_process(["jobs", "run", "--debug"], noise)
    assert done.returncode == cli.EXIT_USER_ERROR, done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert "\nerror: which job? `lakehouse jobs run NAME` (see `lakehouse jobs list`)\n" in (
        done.stderr
    )
    assert "PROJECT-DEBUG" in done.stderr and "LAKEHOUSE-DEBUG" in done.stderr
    assert "PY4J-CALL" not in done.stderr and "URLLIB3-INFO" not in done.stderr
    quiet = _lakehouse_in_a_process(["jobs", "run"], noise)
    assert quiet.stderr.strip().splitlines() == [
        "error: which job? `lakehouse jobs run NAME` (see `lakehouse jobs list`)"
    ]


def test_verbose_turns_only_the_projects_loggers_to_debug() -> None:
    """And a later run without it (tests call main() in-process) turns them back."""
    cli._configure_logging(True)
    assert logging.getLogger("ingestion").getEffectiveLevel() == logging.DEBUG
    cli._configure_logging(False)
    assert logging.getLogger("ingestion").level == logging.NOTSET
    assert logging.getLogger("py4j").getEffectiveLevel() >= logging.WARNING


def test_bench_live_latency_names_an_unknown_merge_on_read_table_in_one_line(capsys) -> None:
    """Refused before the chain starts: `users` is TICKIT's, but no live database holds it."""
    argv = ["bench", "latency", "--live", "--merge-on-read", "listing,users"]
    assert cli.main(argv) == cli.EXIT_USER_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --merge-on-read: no live table users "
        "(they are category, venue, event, date, listing, sales)"
    ]


def test_run_live_with_change_batches_is_one_line(capsys) -> None:
    """`--change-batches` sizes generated CDC; on the live chain a workload makes the changes."""
    assert cli.main(["run", "--live", "--change-batches", "1"]) == cli.EXIT_USER_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --change-batches is for generated CDC: --live runs a workload instead"
    ]


def test_a_second_bench_is_refused_in_one_line_naming_the_first(capsys) -> None:
    """Two at once would share the bench folders and the catalog: the second does nothing."""
    with one_bench_at_a_time("ingest"):
        assert cli.main(["bench", "floor", "--scale", "0.001"]) == cli.EXIT_USER_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        f"error: another benchmark is running in this project (lakehouse bench ingest, pid "
        f"{os.getpid()}, since "
    ), err
    with one_bench_at_a_time("floor"):  # the first one's end frees it
        pass
