"""Values Debezium could not read (PostgreSQL TOAST), replaced by the value the key has.

An UPDATE that leaves a large (TOASTed) `text`, `jsonb`, `bytea` or array
value unchanged reaches logical decoding without that value, unless the
table has REPLICA IDENTITY FULL; Debezium's PostgreSQL connector then sends a
placeholder (its `unavailable.value.placeholder`, the setting
`unavailable_value_placeholder` here). Stored as it comes, the placeholder
would overwrite the real value in bronze and be the changelog's value.

Decoding flags, per event, the columns that came as the placeholder
(`flag_column`); the batch's counting job counts them per column, so a batch
without one costs nothing more. A batch with some has them resolved here,
before either commit: each takes the last real value of its key and column
in the batch (in the order bronze keeps, ordering field then position), and
a key whose first events carry it takes bronze's stored row, read for those
keys only. A genuine NULL is a real value and is carried as such. A key
whose value nobody knows (never seen by bronze, no earlier event) gets null,
and the run logs how many.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ingestion.decode.types import FieldType
from ingestion.hudi_writer import ORDERING_COLUMN
from ingestion.kept import kept
from ingestion.paths import to_hadoop_uri

if TYPE_CHECKING:  # the decoder imports this module, and the plan imports the decoder
    from ingestion.plan import TablePlan

# Per event: the names of the columns that came as the placeholder (empty if none).
UNAVAILABLE = "_cdc_unavailable"
# Kinds whose values can be the placeholder: strings (json, xml, and arrays and
# structs kept as their JSON text included) and bytes. No other type is looked at.
PLACEHOLDER_KINDS = ("string", "bytes")


def placeholder_texts(placeholder: str, kind: str) -> tuple[str, ...]:
    """The raw JSON values that mean "unavailable" in a column of `kind`.

    As Debezium's PostgreSQL connector writes them: bytes are the
    placeholder's UTF-8 bytes (base64 in JSON); a string its text; a text
    array a one-element array of it; an int or bigint array the
    placeholder's bytes as numbers. Arrays are kept as their compact JSON
    text, the form Spark's JSON reader gives them.
    """
    data = placeholder.encode()
    if kind == "bytes":
        return (base64.b64encode(data).decode("ascii"),)
    as_array = json.dumps([placeholder], ensure_ascii=False, separators=(",", ":"))
    as_numbers = json.dumps(list(data), separators=(",", ":"))
    return (placeholder, as_array, as_numbers)


def flag_column(
    raw: dict[str, Column], columns: dict[str, FieldType], placeholder: str | None
) -> Column:
    """The UNAVAILABLE value of an event: which columns' raw JSON values are the placeholder.

    `raw` maps a column to its raw JSON value. Only string and bytes columns
    are compared; without a placeholder (another connector) it is always empty.
    """
    checked = [
        F.when(raw[name].isin(*placeholder_texts(placeholder, kind.kind)), F.lit(name))
        for name, kind in columns.items()
        if placeholder is not None and kind.kind in PLACEHOLDER_KINDS
    ]
    if not checked:
        return F.array().cast("array<string>")
    return F.filter(F.array(*checked), lambda name: name.isNotNull())


@dataclass(frozen=True)
class Resolved:
    """The batch's events with every placeholder replaced, and what could not be.

    `kept` holds the frames stored for the commits, to release after them.
    """

    events: DataFrame
    unknown: dict[str, int]  # per column: placeholders with no known value, stored as null
    kept: tuple[DataFrame, ...]


def _is_flagged(column: str) -> Column:
    return F.array_contains(F.col(UNAVAILABLE), column)


def _carried(column: str) -> str:
    return f"_carried_{column}"


def _stored(column: str) -> str:
    return f"_stored_{column}"


def carry_forward(
    events: DataFrame, key: tuple[str, ...], order: list[str], columns: list[str]
) -> DataFrame:
    """Each flagged column with the last real value of its key before it in the batch.

    The carried value is a struct, so a genuine NULL (a struct holding null)
    is carried as the real value it is; a null struct means none was seen.
    """
    earlier = (
        Window.partitionBy(*key)
        .orderBy(*order)
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    carried = {
        _carried(column): F.last(
            F.when(~_is_flagged(column), F.struct(F.col(column).alias("value"))),
            ignorenulls=True,
        ).over(earlier)
        for column in columns
    }
    return events.withColumns(carried)


def _missing(columns: list[str]) -> dict[str, Column]:
    """Per column, whether the event has a placeholder no earlier event of the batch resolves."""
    return {c: _is_flagged(c) & F.col(_carried(c)).isNull() for c in columns}


def _stored_rows(
    spark: SparkSession, plan: TablePlan, pending: DataFrame, types: dict[str, T.DataType]
) -> DataFrame:
    """Bronze's stored values of the pending keys only (a column it lacks: null)."""
    key = list(plan.table.key)
    stored = spark.read.format("hudi").load(to_hadoop_uri(plan.paths.bronze))
    columns = list(types)
    values = [(F.col(c) if c in stored.columns else F.lit(None)).cast(t) for c, t in types.items()]
    found = stored.select(
        *key,
        *[value.alias(_stored(c)) for c, value in zip(columns, values, strict=True)],
        F.lit(True).alias("_stored_found"),
    )
    # The pending keys are few (most are resolved within the batch): Spark's
    # adaptive execution broadcasts them when they are small enough.
    return found.join(pending, key, "left_semi")


def _final(frame: DataFrame, names: list[str], columns: list[str], stored: bool) -> DataFrame:
    """The events' own columns, each flagged value replaced by the carried or stored one."""

    def value(column: str) -> Column:
        known = F.col(_carried(column))["value"]
        if stored:
            known = F.when(F.col(_carried(column)).isNotNull(), known).otherwise(
                F.col(_stored(column))
            )
        return F.when(_is_flagged(column), known).otherwise(F.col(column)).alias(column)

    return frame.select(*[value(n) if n in columns else F.col(n) for n in names])


def _counts(frame: DataFrame, conditions: dict[str, Column]) -> dict[str, int]:
    """Per column, how many rows meet its condition: one Spark job."""
    row = frame.agg(*[F.count(F.when(c, True)).alias(n) for n, c in conditions.items()]).first()
    return {name: row[name] for name in conditions if row[name]}


def resolve(
    spark: SparkSession, plan: TablePlan, events: DataFrame, columns: list[str]
) -> Resolved:
    """The events with the placeholders of `columns` resolved (see the module docstring).

    One job stores the batch carried forward and counts what that leaves
    open; only if some is open and bronze exists, a second one joins the
    open keys to bronze's rows and counts what is still unknown.
    """
    table = plan.table
    names = [n for n in events.columns if n != UNAVAILABLE]
    order = list(dict.fromkeys([ORDERING_COLUMN[table.ordering], "_cdc_position"]))
    carried = kept(carry_forward(events, table.key, order, columns))
    missing = _missing(columns)
    still_open = _counts(carried, missing)
    if not still_open or not plan.bronze_exists:
        return Resolved(_final(carried, names, columns, False), still_open, (carried,))
    pending = carried.where(_any(missing.values())).select(*table.key)
    types = {c: events.schema[c].dataType for c in columns}
    stored = _stored_rows(spark, plan, pending, types)
    joined = kept(carried.join(stored, list(table.key), "left"))
    never_stored = F.col("_stored_found").isNull()
    unknown = _counts(joined, {c: open_ & never_stored for c, open_ in missing.items()})
    return Resolved(_final(joined, names, columns, True), unknown, (carried, joined))


def _any(conditions: Iterable[Column]) -> Column:
    """Whether any of the conditions holds."""
    result = F.lit(False)
    for condition in conditions:
        result = result | condition
    return result
