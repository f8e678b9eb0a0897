"""The peer: Hudi's HoodieStreamer (DeltaStreamer), one spark-submit per table and batch.

Configured as a data engineer would for these files (the seed's recipe):
JsonDFSSource over the topic's folder, FilebasedSchemaProvider with Avro
schemas generated from conf/tables.yml, a SQL transform to bronze columns,
`--op UPSERT`, and the same Hudi options as our bronze writer (record key,
key generator, table type, ordering field and merge mode, bucket or record-level index),
taken from `hudi_writer.bronze_options` so they cannot drift apart. It needs a
hudi-utilities(-slim) bundle of our Hudi version in the jars folder; without
one the step is reported unavailable, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ingestion.config import TableConfig
from ingestion.hudi_writer import ORDERING_COLUMN, bronze_options, new_layout
from ingestion.settings import Settings
from ingestion.spark import job_jars, spark_conf
from lakehouse.bench.schemas import schema_text, source_schema, target_schema, transform_sql
from lakehouse.stack import spark_home

STREAMER_CLASS = "org.apache.hudi.utilities.streamer.HoodieStreamer"
SOURCE_CLASS = "org.apache.hudi.utilities.sources.JsonDFSSource"
SCHEMA_PROVIDER = "org.apache.hudi.utilities.schema.FilebasedSchemaProvider"
TRANSFORMER = "org.apache.hudi.utilities.transform.SqlQueryBasedTransformer"
# Preferred first: the slim bundle leaves Spark and hudi-spark to the Hudi Spark bundle.
BUNDLES = ("hudi-utilities-slim-bundle_2.12", "hudi-utilities-bundle_2.12")


@dataclass(frozen=True)
class Availability:
    jar: Path | None
    reason: str = ""


def hudi_version(conf: Settings) -> str:
    """Hudi version of the Spark bundle in use (from its file name)."""
    for jar in job_jars(conf):
        match = re.match(r"hudi-spark[\d.]*-bundle_[\d.]+-(.+)\.jar$", jar.name)
        if match:
            return match.group(1)
    return "unknown"


def find_bundle(conf: Settings) -> Availability:
    """The utilities bundle of our Hudi version, or why there is none."""
    version = hudi_version(conf)
    for name in BUNDLES:
        jar = conf.jars_dir / f"{name}-{version}.jar"
        if jar.exists():
            return Availability(jar)
    return Availability(
        None,
        f"no {BUNDLES[0]}-{version}.jar (or {BUNDLES[1]}-{version}.jar) in {conf.jars_dir}: "
        "HoodieStreamer ships only in those bundles, and a bundle of another Hudi version "
        "would not compare the same jars; add it to jvm/pom.xml and run `make setup` "
        "where the Maven repository has it",
    )


def properties(table: TableConfig, conf: Settings, landing: Path, schemas: Path) -> str:
    """The `--props` file: our bronze writer's Hudi options plus the streamer's own."""
    values = {
        **bronze_options(table, conf.shuffle_partitions, new_layout(table, record_index=True)),
        "hoodie.streamer.source.dfs.root": (landing / "topics" / table.topic).as_uri(),
        "hoodie.streamer.schemaprovider.source.schema.file": (
            schemas / f"{table.name}.source.avsc"
        ).as_uri(),
        "hoodie.streamer.schemaprovider.target.schema.file": (
            schemas / f"{table.name}.target.avsc"
        ).as_uri(),
        "hoodie.streamer.transformer.sql": transform_sql(table),
    }
    # java.util.Properties reads a backslash as an escape (the SQL has a regex).
    return "".join(
        f"{key}={value.replace(chr(92), chr(92) * 2)}\n" for key, value in values.items()
    )


def prepare(table: TableConfig, conf: Settings, landing: Path, work: Path) -> Path:
    """Write the table's Avro schemas and properties file; return the properties file."""
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{table.name}.source.avsc").write_text(schema_text(source_schema(table)))
    (work / f"{table.name}.target.avsc").write_text(schema_text(target_schema(table)))
    props = work / f"{table.name}.properties"
    props.write_text(properties(table, conf, landing, work))
    return props


def command(table: TableConfig, conf: Settings, bundle: Path, props: Path, lake: Path) -> list[str]:
    """The spark-submit of one HoodieStreamer run (one table, what is new since its checkpoint)."""
    values = spark_conf(conf)
    values["spark.jars"] = ",".join(filter(None, [values.get("spark.jars"), str(bundle)]))
    args = [
        str(spark_home() / "bin" / "spark-submit"),
        "--class",
        STREAMER_CLASS,
        "--name",
        f"lakehouse-bench-streamer-{table.name}",
        "--driver-memory",
        values.pop("spark.driver.memory"),
    ]
    for key, value in values.items():
        args += ["--conf", f"{key}={value}"]
    table_type = "MERGE_ON_READ" if table.table_type == "mor" else "COPY_ON_WRITE"
    args += [
        str(bundle),
        "--table-type",
        table_type,
        "--target-base-path",
        (lake / table.database / table.name).as_uri(),
        "--target-table",
        table.name,
        "--props",
        props.as_uri(),
        "--source-class",
        SOURCE_CLASS,
        "--schemaprovider-class",
        SCHEMA_PROVIDER,
        "--transformer-class",
        TRANSFORMER,
        "--source-ordering-field",
        ORDERING_COLUMN[table.ordering],
        "--op",
        "UPSERT",
    ]
    return args
