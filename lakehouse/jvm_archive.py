"""`make setup`'s last step: the class-data-sharing archive every Spark driver starts from.

A fresh driver JVM loads and verifies the classes of Spark, Hive's client and
Hudi before its first query: 6.5 s of every one-shot `lakehouse ingest`,
test and bench process on this machine. This records the classes one real
ingestion loads (a tiny generated snapshot and change batch, into a scratch
lake with an embedded Derby catalog, so no running stack is needed or touched)
with `-XX:ArchiveClassesAtExit`; `ingestion.spark.driver_java_options` then
maps them from the archive, 4.3 s to a first query. The JVM checks the
archive against its own build and class path and ignores it, silently, when
either changed; `make setup` makes it again when the jars or packages change.

Run as `python -m lakehouse.jvm_archive` (then `--worker` in the child it starts).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingestion.config import load_tables
from ingestion.engine import ingest
from ingestion.settings import Settings, load_settings, settings
from ingestion.spark import QUIET_ARCHIVE, build_session, spark_conf
from lakehouse.bench.staging import generate_landing, stage

DATABASE = "jvm_archive"
SCALE = 0.001
JVM_EXIT_SECONDS = 300


def scratch_settings(scratch: Path, dump: Path) -> Settings:
    """Settings of the training run: all under `scratch`, recording classes into `dump`."""
    base = load_settings(
        {"home": scratch / "home", "landing": scratch / "landing", "lake": scratch / "lake"}
    )
    java = spark_conf(base)["spark.driver.extraJavaOptions"]
    metastore = scratch / "metastore_db"
    return dataclasses.replace(
        base,
        spark_conf={
            **base.spark_conf,
            "spark.driver.extraJavaOptions": f"{java} -XX:ArchiveClassesAtExit={dump} "
            + QUIET_ARCHIVE,
            "spark.hadoop.javax.jdo.option.ConnectionURL": (
                f"jdbc:derby:;databaseName={metastore};create=true"
            ),
            "spark.hadoop.javax.jdo.option.ConnectionDriverName": (
                "org.apache.derby.jdbc.EmbeddedDriver"
            ),
        },
    )


def train(scratch: Path, dump: Path) -> None:
    """The worker: one snapshot and one change batch through `ingest`, then a catalog read."""
    conf = scratch_settings(scratch, dump)
    landing = generate_landing(scratch / "source", SCALE, 1, progress=False, faults=False)
    # The generated files, whatever sources the settings name (a Kafka source needs a broker).
    tables = [
        dataclasses.replace(t, source=dataclasses.replace(t.source, kind="landing"))
        for t in load_tables(database=DATABASE).values()
    ]
    spark = build_session("lakehouse-jvm-archive", conf, log_file=scratch / "spark.log")
    for batch in range(landing.batches):
        stage(landing, batch, Path(conf.landing))
        ingest(spark, conf, tables, log=lambda line: None)
    for table in tables:
        spark.sql(f"select count(*) from {DATABASE}.{table.name}").collect()
    jvm = spark.sparkContext._gateway.proc  # the driver JVM pyspark started
    spark.stop()
    # The JVM exits when its stdin closes, and writes the archive as it exits:
    # wait for it, or this process ends first and the archive is still being written.
    jvm.stdin.close()
    jvm.wait(timeout=JVM_EXIT_SECONDS)


def make_archive(conf: Settings) -> Path:
    """Run the training in a child JVM of its own; move its archive into place whole."""
    dump = conf.jvm_archive.with_name(conf.jvm_archive.name + ".partial")
    for old in (conf.jvm_archive, dump):  # never train on top of an older archive
        old.unlink(missing_ok=True)
    started = time.monotonic()
    print("jvm archive: recording the classes of one tiny ingestion (about a minute)...")
    log = conf.jvm_archive.with_name("jvm-archive.log")
    with (
        tempfile.TemporaryDirectory(prefix="lakehouse-jvm-archive-") as scratch,
        log.open("w") as out,
    ):
        command = [sys.executable, "-m", "lakehouse.jvm_archive", "--worker", scratch]
        done = subprocess.run([*command, "--dump", str(dump)], stdout=out, stderr=out, check=False)
    if done.returncode != 0 or not dump.exists():
        dump.unlink(missing_ok=True)
        sys.exit(
            f"jvm archive: the training run failed (exit {done.returncode}), see {log}; "
            "drivers start without the archive until `make setup` makes it"
        )
    os.replace(dump, conf.jvm_archive)
    size = conf.jvm_archive.stat().st_size / 1024**2
    print(f"jvm archive: {conf.jvm_archive} ({size:.0f} MiB) in {time.monotonic() - started:.0f} s")
    return conf.jvm_archive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worker", type=Path, help="train in this scratch folder (internal)")
    parser.add_argument("--dump", type=Path, help="where the worker's JVM writes the archive")
    args = parser.parse_args()
    if args.worker:
        train(args.worker, args.dump)
    else:
        make_archive(settings())


if __name__ == "__main__":
    main()
