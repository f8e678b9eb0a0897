"""Property: any decimal Kafka Connect can encode decodes to exactly the same value.

Precision 1..38, scale 0..precision, both signs, zero and the extremes, as
base64 two's complement (with and without extra sign bytes) and as a JSON
number (decimal.format=NUMERIC): in pure Python, in `cdc decode` (many values
in one DataFrame per example) and through `lakehouse ingest` into bronze.
"""

from __future__ import annotations

import dataclasses
import json
import random
import tempfile
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.config import load_tables
from ingestion.decode.single_file import decode_paths
from ingestion.decode.values import decimal_text
from ingestion.paths import QUARANTINE

from .bronze import run_ingest, settings_for, spark_rows
from .debezium_events import (
    decimal_field,
    dumps,
    envelope,
    exact_text,
    field,
    numeric,
    unscaled_base64,
)
from .test_ingest_faults import write_lines


@dataclasses.dataclass(frozen=True)
class Case:
    precision: int
    scale: int
    unscaled: int
    as_number: bool  # decimal.format=NUMERIC
    extra_bytes: int  # sign-extension bytes before the minimal two's complement

    @property
    def encoded(self) -> str:
        if self.as_number:
            return numeric(exact_text(self.unscaled, self.scale))
        return unscaled_base64(self.unscaled, self.extra_bytes)

    @property
    def expected(self) -> str:
        return exact_text(self.unscaled, self.scale)


@st.composite
def cases(draw) -> Case:
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    largest = 10**precision - 1
    unscaled = draw(
        st.one_of(
            st.sampled_from([0, 1, -1, largest, -largest]),
            st.integers(-largest, largest),
        )
    )
    as_number = draw(st.booleans())
    return Case(precision, scale, unscaled, as_number, draw(st.integers(0, 2)))


@given(cases())
@settings(max_examples=500, deadline=None)
def test_decimal_text_is_exact(case: Case) -> None:
    raw = case.encoded.strip("@")
    assert decimal_text(raw, case.scale, is_number=case.as_number) == case.expected


def events_file(folder: Path, batch: list[Case]) -> list[str]:
    """One event per case: column c<i> carries it, with the case's own precision and scale."""
    fields = [field("id", "int32")] + [
        decimal_field(f"c{i}", c.precision, c.scale) for i, c in enumerate(batch)
    ]
    return [
        dumps(envelope(fields, {"id": i, f"c{i}": case.encoded}, 100 + i))
        for i, case in enumerate(batch)
    ]


@given(st.lists(cases(), min_size=12, max_size=12))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cdc_decode_prints_every_decimal_exactly(spark, batch: list[Case]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "decimals.json"
        path.write_text("\n".join(events_file(Path(folder), batch)) + "\n")
        rows = [json.loads(line, parse_float=Decimal) for line in decode_paths(spark, [str(path)])]
    assert len(rows) == len(batch)
    for row in rows:
        value = row[f"c{row['id']}"]  # a scale-0 decimal prints as a JSON integer
        text = format(value, "f") if isinstance(value, Decimal) else str(value)
        assert text == batch[row["id"]].expected, batch[row["id"]]


def seeded_cases(count: int) -> list[Case]:
    """Random cases plus every extreme, reproducible, for the (slower) ingest path."""
    rng = random.Random(14)
    out = [Case(38, 0, 10**38 - 1, False, 0), Case(38, 0, -(10**38 - 1), False, 0),
           Case(38, 38, 10**38 - 1, False, 1), Case(38, 38, -(10**38 - 1), False, 0),
           Case(1, 0, 0, False, 0), Case(1, 1, -9, True, 0), Case(20, 10, 0, True, 0),
           Case(38, 10, 10**38 - 1, True, 0), Case(38, 38, -(10**38 - 1), True, 0)]  # fmt: skip
    while len(out) < count:
        precision = rng.randint(1, 38)
        unscaled = rng.randint(-(10**precision - 1), 10**precision - 1)
        as_number = rng.random() < 0.3
        case = Case(precision, rng.randint(0, precision), unscaled, as_number, 0)
        out.append(case)
    return out


def test_ingest_stores_every_decimal_exactly(spark, tmp_path: Path) -> None:
    batch = seeded_cases(16)
    landing = tmp_path / "landing"
    write_lines(landing, "shop.public.decimals", 0, events_file(tmp_path, batch))
    table = dataclasses.replace(
        load_tables(database="decode_decimals")["category"],
        name="decimals", topic="shop.public.decimals", key=("id",), columns={},
    )  # fmt: skip
    conf = settings_for(landing, tmp_path / "lake")
    result = run_ingest(spark, conf, [table])["decimals"]
    if result.quarantined:
        quarantine = spark_rows(spark, conf, "decode_decimals", QUARANTINE)
        reasons = {batch[r["line"]]: r["reason"] for r in quarantine}
        raise AssertionError(f"quarantined: {reasons}")
    rows = {r["id"]: r for r in spark_rows(spark, conf, "decode_decimals", "decimals")}
    assert len(rows) == len(batch)
    for index, case in enumerate(batch):
        value = rows[index][f"c{index}"]
        assert isinstance(value, Decimal) and format(value, "f") == case.expected, case
