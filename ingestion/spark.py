"""The one Spark session builder: Hudi, the shared catalog, the cached jars.

Every Spark process of the project (ingestion jobs, tests, the Thrift server,
dbt's `session` target) takes its settings from `spark_conf()`, so they all see
the same tables through the same metastore.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ingestion.errors import UserError
from ingestion.settings import PROJECT_DIR, Settings, settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


class MissingJarsError(UserError):
    """The Maven jars are not cached: `make setup` has not run."""


def cached_jars(conf: Settings) -> list[Path]:
    """The jars `make setup` fetched from Maven Central; a run never downloads."""
    jars = sorted(conf.jars_dir.glob("*.jar"))
    if not any(jar.name.startswith("hudi-spark") for jar in jars):
        raise MissingJarsError(
            f"no Hudi bundle in {conf.jars_dir}: run `make setup` to fetch the jars from Maven"
        )
    return jars


def job_jars(conf: Settings) -> list[Path]:
    """Jars shipped with every job; Derby's belong to the catalog, not to executors."""
    return [jar for jar in cached_jars(conf) if not jar.name.startswith("derby")]


def catalog_conf(conf: Settings) -> dict[str, str]:
    """How a Spark driver reaches the catalog: a remote metastore, or the local Derby one."""
    if conf.metastore_uri:
        return {"spark.hadoop.hive.metastore.uris": conf.metastore_uri}
    client = next(conf.jars_dir.glob("derbyclient-*.jar"), None)
    if client is None:
        raise MissingJarsError(f"no derbyclient jar in {conf.jars_dir}: run `make setup`")
    return {
        "spark.hadoop.javax.jdo.option.ConnectionURL": conf.metastore_jdbc_url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.ClientDriver",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # The metastore client loads the JDBC driver from the system class path.
        "spark.driver.extraClassPath": str(client),
    }


def driver_class_path(conf: Settings) -> str:
    """Jars on the driver's system class path.

    The Thrift server resolves Hudi's catalog classes from threads whose class
    loader does not see `spark.jars`; the system class path is seen by all.
    """
    return ":".join(str(jar) for jar in job_jars(conf))


# The JVM ignores an archive made by another JDK or for another class path; it
# says so on stdout, where a command's output belongs, so those lines are off.
QUIET_ARCHIVE = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# The metastore client in every driver (Hive's ObjectStore on DataNucleus) drops
# persistence manager factories as sessions and threads come and go, and each
# one's finalizer calls System.gc(): a stop-the-world full GC of about 0.35 s,
# in bursts, more of them the longer a driver lives. A Thrift server 40 minutes
# old spent 40 s of one 158 s hourly build in them (121 full GCs). As concurrent
# cycles they free the same memory while the queries go on.
CONCURRENT_EXPLICIT_GC = "-XX:+ExplicitGCInvokesConcurrent"
# Compiled query classes Spark keeps for reuse (spark.sql.codegen.cache.maxEntries,
# default 100). A table's micro-batch compiles about 30 distinct classes, twice
# (the driver's and the tasks' class loaders key them apart): with 100 entries
# the continuous service compiled every class anew each micro-batch (Janino,
# then the JIT again: 196 of a --scale 1 latency run's 784 s of JVM CPU went to
# the JIT compiler threads). With 4,000, a plan seen before reuses its classes;
# `size_codegen_cache` makes the setting hold.
CODEGEN_CACHE_ENTRIES = 4000

# Dates and timestamps in the proleptic Gregorian calendar, exactly as Debezium
# encodes them (days and microseconds since the epoch), whatever the year.
# Spark's defaults (EXCEPTION) refuse to write a date before 1582-10-15 or a
# timestamp before 1900 to Parquet or Avro (Hudi's writers included), and to
# read one from a file that does not say which calendar wrote it: an ingest
# holding one `0001-01-01` failed whole. LEGACY would shift such values into
# the hybrid Julian calendar of Spark 2 and Hive. Every session of the project
# (jobs, the Thrift server, dbt's `session` target) gets these (`spark_conf`).
EXACT_DATETIMES = {
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED",
    "spark.sql.avro.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.avro.datetimeRebaseModeInRead": "CORRECTED",
}


# Hudi sizes the records it merges with its bundled JOL 0.16, whose first use
# in a JVM tries two ways to look inside it and prints a warning for each
# failure: a dynamic attach of its own agent (refused: a JVM may not attach to
# itself), then the Serviceability Agent, through four more JVMs it starts
# (seen with strace). That took 0.9 s in a bare JVM, and about 2 s on a write
# thread of a one-shot ingestion. Without them JOL reads the object layout
# through Unsafe, and the sizes come out the same: a one-shot 1% change batch
# took 0.92x the time (docs/benchmarks.md, "JOL's attach").
SKIP_JOL_ATTACH = "-Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true"
# What every JVM of the project, driver or executor, starts with.
EVERY_JVM = f"-Duser.timezone=UTC {SKIP_JOL_ATTACH}"


def driver_java_options(conf: Settings, job: bool = True) -> str:
    """The driver JVM's options: those of every JVM (UTC, no JOL attach),
    System.gc() as a concurrent cycle (CONCURRENT_EXPLICIT_GC), the class
    archive once `make setup` has made it, and a job's own options
    (`job_java_options`; the long-running Thrift server passes `job=False`).

    Mapping the archive's classes instead of loading and verifying them from the
    jars takes a driver's start and first query from 6.5 s to 4.3 s here.
    """
    options = f"{EVERY_JVM} {CONCURRENT_EXPLICIT_GC}"
    if conf.jvm_archive.exists():
        options += f" -XX:SharedArchiveFile={conf.jvm_archive} {QUIET_ARCHIVE}"
    if job and conf.job_java_options:
        options += f" {conf.job_java_options}"
    return options


# The quick JIT compiler (C1) alone: no optimizing compilations.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def for_batch(conf: Settings, new_bytes: int | None) -> Settings:
    """The settings of a one-shot driver that will read `new_bytes` of input (None: unknown).

    A fresh JVM spends much of a small batch compiling: 45 and 51 s of the
    JIT's CPU in runs of 54 to 73 s of the 1% change batch at --scale 1, its
    optimizing compilations done for code that has finished by the time they
    are ready. Up to `quick_jit_max_mb` of input the driver runs on the quick
    compiler alone (that batch: 0.83x and 0.90x); a larger batch (the --scale
    1 snapshot, 1.6 GB: 1.12x with it), the continuous service and the Thrift
    server keep both, which pay back on long work.
    """
    small = new_bytes is not None and new_bytes <= conf.quick_jit_max_mb * 1024**2
    if not small or QUICK_JIT in conf.job_java_options.split():
        return conf
    return replace(conf, job_java_options=f"{conf.job_java_options} {QUICK_JIT}".strip())


def runs_quick_jit(session: SparkSession) -> bool:
    """Whether the session's driver JVM was started with the quick JIT alone, as it says itself."""
    runtime = session._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    return QUICK_JIT in list(runtime.getInputArguments())


def retained_history(conf: Settings) -> dict[str, str]:
    """What a driver keeps of finished work for its web UI, bounded by `ui_retained_history`.

    A long-running driver (the Thrift server answering a query per flush, the
    continuous ingestion service) adds jobs, stages and SQL executions without
    end; Spark's defaults keep 1,000 of each, every task of 100,000, and every
    root RDD of the DAG graphs, all in the old generation
    (docs/decisions/0014-thrift-server-stays-up.md).
    """
    kept = str(conf.ui_retained_history)
    return {
        "spark.ui.retainedJobs": kept,
        "spark.ui.retainedStages": kept,
        "spark.sql.ui.retainedExecutions": kept,
        "spark.ui.dagGraph.retainedRootRDDs": kept,
        "spark.ui.retainedTasks": str(100 * conf.ui_retained_history),
    }


def spark_conf(conf: Settings | None = None) -> dict[str, str]:
    """Spark settings shared by every process of the project, overridable from settings."""
    conf = conf or settings()
    values = {
        "spark.master": conf.spark_master,
        "spark.driver.memory": conf.driver_memory,
        "spark.executor.memory": conf.executor_memory,
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
        "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": conf.warehouse_dir.resolve().as_uri(),
        "spark.sql.shuffle.partitions": str(conf.shuffle_partitions),
        "spark.default.parallelism": str(conf.shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": driver_java_options(conf),
        "spark.executor.extraJavaOptions": EVERY_JVM,
        "spark.ui.showConsoleProgress": "false",
        # RPC and block manager on the configured address only (loopback by
        # default); the web UI follows SPARK_LOCAL_IP (`spark_env`).
        "spark.driver.bindAddress": conf.bind_host,
        "spark.driver.host": conf.bind_host,
        # Python workers run this interpreter, which has the project's packages;
        # a cluster overrides it through spark_conf.
        "spark.pyspark.python": sys.executable,
        "spark.sql.adaptive.enabled": "true",
        # Bronze tables change under other sessions (the Thrift server reads
        # while jobs write): never serve a stale file listing.
        "spark.sql.metadataCacheTTLSeconds": "1",
        "spark.sql.hive.metastorePartitionPruning": "true",
        "spark.sql.codegen.cache.maxEntries": str(CODEGEN_CACHE_ENTRIES),
        **EXACT_DATETIMES,
        **retained_history(conf),
    }
    values.update({f"spark.hadoop.{key}": value for key, value in s3_conf().items()})
    values.update(catalog_conf(conf))
    values["spark.driver.extraClassPath"] = ":".join(
        filter(None, [driver_class_path(conf), values.get("spark.driver.extraClassPath")])
    )
    values.update(conf.spark_conf)
    if "spark.jars" not in values and ships_jars(values["spark.master"]):
        values["spark.jars"] = ",".join(str(jar) for jar in job_jars(conf))
    return values


def size_codegen_cache(session: SparkSession) -> None:
    """Create Spark's compiled-class cache now, from this session's settings.

    The cache takes its size from the settings of the thread that first
    compiles a query. That was a worker thread with no active session, which
    read Spark's defaults: the cache held 100 entries whatever the session said.
    Created here, on the thread that built the session, it reads the session's
    `spark.sql.codegen.cache.maxEntries`.
    """
    jvm = session._jvm
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    jvm.org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator.compileTime()


def ships_jars(master: str) -> bool:
    """Whether executors run in JVMs of their own, which need the jars shipped (`spark.jars`).

    In local mode the executors are the driver, which has every jar on its class
    path (`driver_class_path`). There `spark.jars` would only cost: PySpark copies
    each listed file (360 MB) into a temporary folder at every start, 1.5 s of a
    driver's start here, and a process killed with -9 leaves that copy behind.
    """
    return re.fullmatch(r"local(\[[^\]]*\])?", master.strip()) is None


def spark_env(conf: Settings | None = None) -> dict[str, str]:
    """Environment of every Spark JVM of the project.

    Spark's web UI binds SPARK_LOCAL_IP (else every interface), and Hudi reads
    its global defaults (conf/hudi-defaults.conf) from HUDI_CONF_DIR.
    """
    conf = conf or settings()
    return {"SPARK_LOCAL_IP": conf.bind_host, "HUDI_CONF_DIR": str(conf.hudi_conf_dir)}


def s3_conf() -> dict[str, str]:
    """s3a settings from the standard AWS variables (a local S3-compatible server, MinIO...).

    Credentials stay with the default s3a provider chain (environment, profile,
    instance role); only a custom endpoint needs telling.
    """
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        return {}
    return {
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": str(endpoint.startswith("https")).lower(),
        "fs.s3a.endpoint.region": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
    }


def package_zip() -> str:
    """The `ingestion` package as a zip, for executors that do not have it installed."""
    package = Path(__file__).resolve().parent
    target = Path(tempfile.mkdtemp(prefix="lakehouse-pyfiles-")) / "ingestion"
    return shutil.make_archive(str(target), "zip", package.parent, package.name)


LOG_TO_FILE = PROJECT_DIR / "conf" / "log4j2-file.properties"


# Classes PySpark names by their short name on every call: `functions` for each
# function of pyspark.sql.functions, `PythonUtils` for each list it converts.
HOT_CLASSES = ("org.apache.spark.sql.functions", "org.apache.spark.api.python.PythonUtils")


def import_hot_classes(session: SparkSession) -> None:
    """Let py4j find PySpark's most used short class names at its second try.

    py4j tries a short name as it is, then as a single import, then in each
    imported package in turn, in no set order (PySpark imports nine). Every
    miss is a class lookup across the whole class path that ends in an
    exception: 2.0 of a one-shot 1% change batch's thread seconds went to
    resolving `functions`, 0.7 with it imported (docs/benchmarks.md, "JOL's
    attach; PySpark's short class names").
    """
    from py4j.java_gateway import java_import

    for name in HOT_CLASSES:
        java_import(session._jvm, name)


def build_session(
    app_name: str, conf: Settings | None = None, log_file: Path | None = None
) -> SparkSession:
    """Create (or return) the process's Spark session with the project's settings.

    With `log_file`, the JVM logs there instead of on the console (a command
    whose failures must read as one line sets it).
    """
    from pyspark.sql import SparkSession

    values = spark_conf(conf)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        values["spark.driver.extraJavaOptions"] += (
            f" -Dlog4j2.configurationFile={LOG_TO_FILE} -Dlakehouse.log.file={log_file}"
        )
    # pyspark starts Python workers from this variable, not from spark.pyspark.python.
    os.environ.setdefault("PYSPARK_PYTHON", values["spark.pyspark.python"])
    # The JVM that pyspark launches inherits this process's environment.
    os.environ.update(spark_env(conf))
    builder = SparkSession.builder.appName(app_name).enableHiveSupport()
    for key, value in values.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    import_hot_classes(session)
    session.sparkContext.setLogLevel("WARN")
    size_codegen_cache(session)
    if not session.sparkContext.master.startswith("local"):
        # Executors on other hosts import `ingestion` (the Avro reader) from this zip.
        session.sparkContext.addPyFile(package_zip())
    log.info("spark session %s on %s", app_name, session.sparkContext.master)
    return session
