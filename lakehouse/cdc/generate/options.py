"""Every setting of the generator, with its default, in one dataclass.

The CLI, the tests and the ingestion tests all build a `GenerateOptions`;
nothing else in the package hard-codes a tunable, so a default changes here
and only here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from lakehouse.cdc.generate.tickit import TABLES

FORMATS = ("json", "json-schemaless", "unwrapped", "avro")
DECIMAL_MODES = ("precise", "double", "string")
OPS = ("c", "u", "d")


class OptionsError(ValueError):
    """An option is out of range; the message names the option."""


@dataclass(frozen=True)
class OpMix:
    """Relative weights of inserts, updates and deletes in a change batch."""

    c: float = 0.30
    u: float = 0.55
    d: float = 0.15

    @classmethod
    def parse(cls, text: str) -> OpMix:
        """Read `c=30,u=55,d=15` (weights, normalised; a missing op weighs 0)."""
        weights = dict.fromkeys(OPS, 0.0)
        for part in text.split(","):
            name, _, value = part.strip().partition("=")
            if name not in weights or not value:
                raise OptionsError(f"--op-mix: expected c=W,u=W,d=W, got {text!r}")
            try:
                weights[name] = float(value)
            except ValueError as error:
                raise OptionsError(f"--op-mix: {name}={value!r} is not a number") from error
        return cls(**weights)

    def weights(self) -> tuple[float, float, float]:
        """The weights in c, u, d order, normalised to sum 1."""
        total = self.c + self.u + self.d
        return (self.c / total, self.u / total, self.d / total)

    def __str__(self) -> str:
        return f"c={self.c:g},u={self.u:g},d={self.d:g}"


@dataclass(frozen=True)
class GenerateOptions:
    """What to generate and where; the defaults are the documented behaviour."""

    out: str
    scale: float = 1.0
    format: str = "json"
    seed: int = 42
    change_batches: int = 3
    flush_size: int = 1000
    partitions: int = 1
    change_fraction: float = 0.01
    op_mix: OpMix = field(default_factory=OpMix)
    decimal_handling_mode: str = "precise"
    truncate_table: str | None = "category"
    # Faults and schema evolution: in which change batch, and how much.
    truncate_batch: int = 2
    schema_change_batch: int = 2
    duplicate_fraction: float = 0.02
    late_updates_per_topic: int = 1
    # The day of the snapshot; change batch k lands k days later.
    snapshot_day: date = date(2024, 3, 1)
    # Debezium and Kafka Connect facts written into every event and file.
    debezium_version: str = "2.4.2.Final"
    topic_prefix: str = "tickit"
    avro_sync_interval: int = 64000
    show_progress: bool = False

    def __post_init__(self) -> None:
        self._check(self.scale > 0, "--scale must be > 0")
        self._check(self.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}")
        self._check(self.change_batches >= 0, "--change-batches must be >= 0")
        self._check(self.flush_size >= 1, "--flush-size must be >= 1")
        self._check(self.partitions >= 1, "--partitions must be >= 1")
        self._check(0 < self.change_fraction <= 1, "--change-fraction must be in (0, 1]")
        self._check(
            self.decimal_handling_mode in DECIMAL_MODES,
            f"--decimal-handling-mode must be one of {', '.join(DECIMAL_MODES)}",
        )
        weights = (self.op_mix.c, self.op_mix.u, self.op_mix.d)
        self._check(min(weights) >= 0 and sum(weights) > 0, "--op-mix weights must be >= 0")
        self._check(0 <= self.duplicate_fraction < 1, "duplicate_fraction must be in [0, 1)")
        self._check(self.late_updates_per_topic >= 0, "late_updates_per_topic must be >= 0")
        if self.truncate_table is not None:
            self._check(
                self.truncate_table in TABLES,
                f"--truncate-table must be one of {', '.join(TABLES)} or none",
            )

    @staticmethod
    def _check(condition: bool, message: str) -> None:
        if not condition:
            raise OptionsError(message)
