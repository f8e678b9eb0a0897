"""Steps 2 and 3 of a table's run: decode the planned batch, then count it once.

Decoding reads the bronze table's current columns first, so that columns added
by earlier runs keep their types. Counting is one Spark job over the lines and
the decoded rows, which also stores the decoded rows (kept.py): the events and
rejects that the commits then read are filters over them. The same job counts
the values Debezium could not read (TOAST); only a batch with some has them
resolved before the commits (unavailable_values.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.decode.events import DecodeSpec, classify, decode
from ingestion.decode.types import FieldType, from_spark_type, widen
from ingestion.kept import kept, release
from ingestion.paths import to_hadoop_uri
from ingestion.plan import TablePlan
from ingestion.profile import Profiler
from ingestion.results import BatchCounts, BronzeCounts
from ingestion.sources.base import Source
from ingestion.unavailable_values import UNAVAILABLE, resolve


@dataclass(frozen=True)
class DecodedBatch:
    """The decoded batch, kept until its commits are done."""

    events: DataFrame  # source columns + _cdc_* + _cdc_event_id (+ UNAVAILABLE), truncates included
    rejects: DataFrame  # raw, source_file, line, reason
    lines: DataFrame  # the classified lines
    rows: DataFrame  # the decoded lines that events and rejects filter (kept)
    columns: tuple[str, ...]  # source columns, config order then new ones
    resolved: tuple[DataFrame, ...] = field(default=())  # kept by unavailable_values.resolve

    def release_lines(self) -> None:
        """Free the stored lines once counted: the commits read only the rows.

        Held through the commits, every table's lines (the raw text of each
        event) sat in memory beside its rows and Hudi's work.
        """
        release(self.lines)

    def release(self) -> None:
        """Free the stored rows and lines (kept.py) once the commits are done."""
        for frame in (self.rows, self.lines, *self.resolved):
            release(frame)


def field_types(schema: T.StructType) -> dict[str, FieldType]:
    """Source column types of a bronze schema (Hudi's and our `_cdc_` columns left out)."""
    return {
        column.name: from_spark_type(column.dataType.simpleString())
        for column in schema.fields
        if not column.name.startswith(("_hoodie", "_cdc_"))
    }


def existing_columns(spark: SparkSession, plan: TablePlan) -> dict[str, FieldType]:
    """Source columns the bronze table already has (including ones added by evolution).

    The plan read them from the newest commit's schema; a table without one
    (written before commits carried it) is read through Spark.
    """
    if not plan.bronze_exists:
        return {}
    if plan.bronze.schema is not None:
        return field_types(plan.bronze.schema)
    return field_types(spark.read.format("hudi").load(to_hadoop_uri(plan.paths.bronze)).schema)


def decode_batch(
    spark: SparkSession,
    plan: TablePlan,
    source: Source[Any],
    ingested_at: str,
    profile: Profiler,
    placeholder: str | None = None,
) -> DecodedBatch:
    """Read the plan's batch from its source and decode it; the decoded lines kept.

    `placeholder`: Debezium's unavailable.value.placeholder, flagged in the events.
    """
    table = plan.table
    with profile.step("bronze schema"):
        stored = existing_columns(spark, plan)
        # A declared type never narrows what bronze already holds (a column widened
        # by a schema change keeps its wider type); an incompatible one stays declared.
        declared = stored | {
            name: (widen(stored[name], kind) or kind) if name in stored else kind
            for name, kind in table.columns.items()
        }
    spec = DecodeSpec(table.source.connector, table.key, declared, placeholder)
    with profile.step("decode"):
        decoded = decode(classify(source.read(plan.batch)), spec, ingested_at)
        # Events and rejects, filters over the rows, read them as stored.
        decoded = replace(decoded, rows=kept(decoded.rows))
    return DecodedBatch(
        events=decoded.flagged_events,
        rejects=decoded.rejects,
        lines=decoded.lines,
        rows=decoded.rows,
        columns=tuple(decoded.columns),
    )


@dataclass(frozen=True)
class CountedBatch:
    """A batch's counts, and per column how many of its events came as Debezium's placeholder."""

    counts: BatchCounts
    unavailable: dict[str, int] = field(default_factory=dict)


def count_batch(batch: DecodedBatch) -> CountedBatch:
    """Flavours of the lines, ops of the events and the rejects: one Spark job, not three.

    The same job takes the events' lowest and highest source position and
    newest source time, and counts the placeholders per column (UNAVAILABLE):
    finding none costs no job.
    """
    none = (F.lit(None).cast("string").alias("position"), F.lit(None).cast("long").alias("ms"))
    placeholders = batch.events.where(F.size(UNAVAILABLE) > 0).select(
        F.lit("unavailable").alias("kind"), F.explode(UNAVAILABLE).alias("value"), *none
    )
    counted = (
        batch.lines.select(F.lit("flavour").alias("kind"), F.col("flavour").alias("value"), *none)
        .unionByName(
            batch.events.select(
                F.lit("op").alias("kind"),
                F.col("_cdc_op").alias("value"),
                F.col("_cdc_position").alias("position"),
                F.expr("unix_millis(_cdc_source_ts)").alias("ms"),
            )
        )
        .unionByName(
            batch.rejects.select(F.lit("reject").alias("kind"), F.lit("").alias("value"), *none)
        )
        .unionByName(placeholders)
        .groupBy("kind", "value")
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.min("position").alias("first"),
            F.max("position").alias("last"),
            F.max("ms").alias("ms"),
        )
        .collect()
    )
    unavailable = {r["value"]: r["count"] for r in counted if r["kind"] == "unavailable"}
    counted = [r for r in counted if r["kind"] != "unavailable"]
    counts = BatchCounts.from_rows((r["kind"], r["value"], r["count"]) for r in counted)
    ops = [r for r in counted if r["kind"] == "op"]
    counts = replace(
        counts,
        first_position=min((r["first"] for r in ops), default=None),
        last_position=max((r["last"] for r in ops), default=None),
        newest_source_ms=max((r["ms"] for r in ops if r["ms"] is not None), default=None),
    )
    return CountedBatch(counts, dict(sorted(unavailable.items())))


def resolve_unavailable(
    spark: SparkSession, plan: TablePlan, batch: DecodedBatch, counted: CountedBatch
) -> tuple[DecodedBatch, dict[str, int]]:
    """The batch with Debezium's placeholders replaced by the values they stand for.

    A batch without any is returned as it is, without a Spark job. Also
    returned: per column, the placeholders whose value nobody knew (stored
    as null), which the caller reports.
    """
    if not counted.unavailable:
        return batch, {}
    resolved = resolve(spark, plan, batch.events, sorted(counted.unavailable))
    return replace(batch, events=resolved.events, resolved=resolved.kept), resolved.unknown


def count_bronze(bronze: DataFrame) -> BronzeCounts:
    """Deleted and upserted rows of a bronze commit: one Spark job, not two."""
    row = bronze.agg(
        F.count(F.lit(1)).alias("rows"),
        F.count(F.when(F.col("_cdc_is_deleted"), True)).alias("deleted"),
    ).first()
    return BronzeCounts.from_totals(rows=row["rows"], deleted=row["deleted"])
