"""What every driver JVM of the project is started with (ingestion/spark.py), read back
from the test run's own session."""

from __future__ import annotations

from ingestion.spark import HOT_CLASSES


def test_hudi_sizes_records_without_trying_to_attach_to_the_jvm(spark) -> None:
    """JOL, which Hudi sizes records with, would start four JVMs to attach to this one."""
    system = spark._jvm.java.lang.System
    assert system.getProperty("jol.skipDynamicAttach") == "true"
    assert system.getProperty("jol.skipHotspotSAAttach") == "true"
    sizes = spark._jvm.org.apache.hudi.common.util.ObjectSizeCalculator
    empty, filled = spark._jvm.java.util.HashMap(), spark._jvm.java.util.HashMap()
    filled.put("key", "x" * 1000)
    assert 0 < sizes.getObjectSize(empty) < sizes.getObjectSize(filled)


def test_pyspark_short_class_names_are_imported_as_existing_classes(spark) -> None:
    """A single import of a class that does not exist would break every function call."""
    for name in HOT_CLASSES:
        assert spark._jvm.java.lang.Class.forName(name).getName() == name
    from pyspark.sql import functions as F

    # PySpark's functions reach the JVM through the imported short name.
    assert spark.range(4).select(F.max(F.col("id") * F.lit(2))).first()[0] == 6
