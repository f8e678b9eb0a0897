"""The table formats `bench ingest` compares ours with, and how each is opened by Spark.

Delta Lake's and Iceberg's jars, SQL extensions and catalogs live only here:
they are fetched into `.lakehouse/bench-jars` (jvm/bench/pom.xml, `make
setup`), never into `.lakehouse/jars`, and only a peer's own measured process
(`peer_apply`, `verify`) builds a session with them. Every other setting is the
project's (`spark_conf`), so the peers run on the same Spark as ours.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from ingestion.config import TableConfig
from ingestion.errors import UserError
from ingestion.paths import to_hadoop_uri
from ingestion.settings import Settings
from ingestion.spark import build_session, spark_conf

ICEBERG_CATALOG = "bench_iceberg"
ENGINES = ("hudi", "delta", "iceberg")


@dataclass(frozen=True)
class Peer:
    """One peer contender: the engine it writes and how."""

    name: str  # contender name in the results
    label: str
    engine: str  # hudi | delta | iceberg
    iceberg_mode: str = ""  # copy-on-write | merge-on-read


PEERS = (
    Peer("delta", "Delta Lake 3.3 MERGE INTO", "delta"),
    Peer("iceberg_cow", "Iceberg 1.10 MERGE INTO, copy-on-write", "iceberg", "copy-on-write"),
    Peer("iceberg_mor", "Iceberg 1.10 MERGE INTO, merge-on-read", "iceberg", "merge-on-read"),
    Peer("hudi", "Hudi 1.2 datasource upsert, defaults", "hudi"),
)
# Jar name prefixes each engine needs from .lakehouse/bench-jars.
BENCH_JARS = {
    "hudi": (),
    "delta": ("delta-spark_", "delta-storage-"),
    "iceberg": ("iceberg-spark-runtime-",),
}


class MissingBenchJarsError(UserError):
    """The peers' jars were not fetched: `make setup` has not run since they were added."""


def bench_jars_dir(conf: Settings) -> Path:
    """`bench-jars` beside the project's jars folder: `make setup` fills both."""
    return conf.jars_dir.parent / "bench-jars"


def bench_jars(conf: Settings, engine: str) -> list[Path]:
    """The engine's jars, fetched once by `make setup`; a run never downloads."""
    found = []
    for prefix in BENCH_JARS[engine]:
        jar = next(iter(sorted(bench_jars_dir(conf).glob(f"{prefix}*.jar"))), None)
        if jar is None:
            raise MissingBenchJarsError(
                f"no {prefix}*.jar in {bench_jars_dir(conf)}: run `make setup` "
                "(it fetches jvm/bench/pom.xml)"
            )
        found.append(jar)
    return found


def engine_conf(conf: Settings, engine: str, lake: Path) -> dict[str, str]:
    """The Spark settings an engine adds to the project's: its jars, extension and catalog."""
    if engine == "hudi":
        return {}
    shared = spark_conf(conf)
    # spark.jars: a cluster's; none in local mode.
    jars = ",".join(filter(None, [shared.get("spark.jars"), *map(str, bench_jars(conf, engine))]))
    # Their tables are addressed by path (Delta) or a Hadoop catalog in a folder
    # (Iceberg): the shared metastore would only add a lookup to every statement.
    common = {"spark.jars": jars, "spark.sql.catalogImplementation": "in-memory"}
    if engine == "delta":
        return {
            **common,
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            # Delta rebuilds a table's state from its log in 50 partitions unless
            # told otherwise: 50 tasks for a log of a few files, at every read and
            # MERGE. Sized like the project's own shuffles, as a user of a
            # small machine would set it.
            "spark.databricks.delta.snapshotPartitions": shared["spark.sql.shuffle.partitions"],
        }
    return {
        **common,
        "spark.sql.extensions": (
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
        ),
        f"spark.sql.catalog.{ICEBERG_CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{ICEBERG_CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{ICEBERG_CATALOG}.warehouse": to_hadoop_uri(str(lake)),
    }


def session(conf: Settings, engine: str, lake: Path, app: str) -> SparkSession:
    """The project's session plus the engine's settings (for this process only)."""
    extra = {**conf.spark_conf, **engine_conf(conf, engine, lake)}
    return build_session(app, dataclasses.replace(conf, spark_conf=extra))


def table_path(lake: Path, table: TableConfig) -> Path:
    """Where a contender's table lives: `<lake>/<database>/<table>` for every engine."""
    return lake / table.database / table.name


def iceberg_name(table: TableConfig) -> str:
    return f"{ICEBERG_CATALOG}.{table.database}.{table.name}"


def read_state(
    spark: SparkSession,
    engine: str,
    lake: Path,
    table: TableConfig,
    options: dict[str, str] | None = None,
) -> DataFrame:
    """The table's current state, read the way a query (dbt's staging view) reads it.

    `options`: the format's reader options (a path-read format's, not Iceberg's).
    """
    if engine == "iceberg":
        return spark.table(iceberg_name(table))
    path = to_hadoop_uri(str(table_path(lake, table)))
    return spark.read.format(engine).options(**(options or {})).load(path)
