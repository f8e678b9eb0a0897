"""The rows of a bronze commit: the batch's changes plus the deletes its truncates imply.

Truncates never reach bronze as rows of their own. With `truncate: delete`,
every key a truncate wiped out gets a delete at the truncate's position; with
`ignore`, truncates are only kept in the changelog.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ingestion import hudi_writer
from ingestion.decode.events import CDC_COLUMNS
from ingestion.paths import to_hadoop_uri
from ingestion.plan import TablePlan


def _stored_rows(spark: SparkSession, plan: TablePlan, keep: list[str]) -> DataFrame:
    """The bronze table's rows in the batch's columns (missing ones null)."""
    stored = spark.read.format("hudi").load(to_hadoop_uri(plan.paths.bronze))
    for column in keep:
        if column not in stored.columns:
            stored = stored.withColumn(column, F.lit(None))
    return stored.select(*keep)


def _wiped(earlier: DataFrame, key: tuple[str, ...], truncate: dict[str, Any]) -> DataFrame:
    """Deletes of the latest image of every key before one truncate, at its position."""
    latest = Window.partitionBy(*key).orderBy(F.col("_cdc_position").desc())
    return (
        earlier.where(F.col("_cdc_position") < truncate["_cdc_position"])
        .withColumn("_rank", F.row_number().over(latest))
        .where("_rank = 1")
        .drop("_rank")
        .withColumn("_cdc_op", F.lit("t"))
        .withColumn("_cdc_position", F.lit(truncate["_cdc_position"]))
        .withColumn("_cdc_source_ts", F.lit(truncate["_cdc_source_ts"]))
        .withColumn("_cdc_source_file", F.lit(truncate["_cdc_source_file"]))
        .withColumn("_cdc_is_deleted", F.lit(True))
    )


def truncate_deletes(
    spark: SparkSession, plan: TablePlan, events: DataFrame, columns: tuple[str, ...]
) -> DataFrame | None:
    """Delete rows for every key a truncate wiped out, at the truncate's position.

    Each gets the latest image it had before the truncate; rows re-inserted after
    it carry a higher position, so Hudi's ordering keeps them.
    """
    truncates = (
        events.where("_cdc_op = 't'")
        .select("_cdc_position", "_cdc_source_ts", "_cdc_source_file", "_cdc_ingested_at")
        .orderBy("_cdc_position")
        .collect()
    )
    if not truncates:
        return None
    keep = [*columns, *CDC_COLUMNS]
    earlier = events.where("_cdc_op <> 't'").select(*keep)
    if plan.bronze_exists:
        earlier = earlier.unionByName(_stored_rows(spark, plan, keep), allowMissingColumns=True)
    deletes: DataFrame | None = None
    for truncate in truncates:
        wiped = _wiped(earlier, plan.table.key, truncate.asDict())
        deletes = wiped if deletes is None else deletes.unionByName(wiped)
    return deletes


def bronze_frame(
    spark: SparkSession,
    plan: TablePlan,
    events: DataFrame,
    columns: tuple[str, ...],
    has_truncates: bool,
) -> DataFrame:
    """Rows for the bronze commit: changes plus truncate deletes, per the delete mode.

    `has_truncates` comes from the batch's op counts: without truncates there is
    nothing to look for, and no Spark job is run to find that out.
    """
    rows = events.where("_cdc_op <> 't'").select(*columns, *CDC_COLUMNS)
    if has_truncates and plan.table.truncate != "ignore":
        deletes = truncate_deletes(spark, plan, events, columns)
        if deletes is not None:
            rows = rows.unionByName(deletes.select(*columns, *CDC_COLUMNS))
    if plan.table.delete_mode == "hard":
        rows = rows.withColumn(hudi_writer.HARD_DELETE_COLUMN, F.col("_cdc_is_deleted"))
    return rows
