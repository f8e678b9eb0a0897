"""The class archive `make setup` records is one every Spark driver of the project can map.

`-Xshare:on` turns the JVM's silent fallback (start without the archive) into
an error, so a driver started with it fails when the archive is missing, was
made by another JDK, or for another class path.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from ingestion.settings import settings
from ingestion.spark import driver_java_options, ships_jars, spark_conf
from lakehouse import stack

SESSION = """
import sys
from dataclasses import replace
from ingestion.settings import settings
from ingestion.spark import build_session
conf = settings()
java = {"spark.driver.extraJavaOptions": sys.argv[1]}
spark = build_session("archive-check", replace(conf, spark_conf={**conf.spark_conf, **java}))
print("answer", spark.sql("select 6 * 7").first()[0])
"""


def test_setup_made_the_archive_and_a_driver_maps_it(local_stack) -> None:
    archive = settings().jvm_archive
    assert archive.stat().st_size > 50 * 1024**2, archive
    options = driver_java_options(settings())
    assert f"-XX:SharedArchiveFile={archive}" in options
    done = subprocess.run(
        [sys.executable, "-c", SESSION, f"{options} -Xshare:on"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "answer 42" in done.stdout, done.stdout + done.stderr[-3000:]


def test_job_options_reach_the_jobs_not_the_thrift_server() -> None:
    conf = replace(settings(), job_java_options="-XX:TieredStopAtLevel=1")
    assert "-XX:TieredStopAtLevel=1" in spark_conf(conf)["spark.driver.extraJavaOptions"]
    thrift = [
        arg
        for arg in stack._thrift_command(conf)
        if arg.startswith("spark.driver.extraJavaOptions")
    ]
    assert thrift == [f"spark.driver.extraJavaOptions={driver_java_options(conf, job=False)}"]
    assert "TieredStopAtLevel" not in thrift[0] and "SharedArchiveFile" in thrift[0]
    # Options a user set in spark_conf reach the server as they are.
    mine = replace(conf, spark_conf={"spark.driver.extraJavaOptions": "-Dmine=1"})
    assert "spark.driver.extraJavaOptions=-Dmine=1" in stack._thrift_command(mine)


def test_a_local_driver_starts_without_copying_the_jars(spark) -> None:
    """Local mode keeps the jars on the driver's class path, not in `spark.jars`: PySpark
    would copy all 360 MB of them into a temporary folder at every start (left behind by
    a process killed with -9). A cluster's executors still get them shipped."""
    from pyspark import SparkFiles

    assert spark.sparkContext.master.startswith("local")
    assert spark.sparkContext.getConf().get("spark.jars", "") == ""
    assert list(Path(SparkFiles.getRootDirectory()).glob("*.jar")) == []
    assert spark.conf.get("spark.sql.catalog.spark_catalog").endswith("HoodieCatalog")
    cluster = spark_conf(replace(settings(), spark_master="spark://127.0.0.1:7077"))
    shipped = {Path(jar).name for jar in cluster["spark.jars"].split(",")}
    assert any(name.startswith("hudi-spark") for name in shipped)
    assert not ships_jars("local[2]") and not ships_jars("local")
    assert ships_jars("local-cluster[2,1,1024]")  # executors in JVMs of their own
