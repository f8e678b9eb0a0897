"""TICKIT operational data and its Debezium CDC landing zone, at any scale.

`generate(GenerateOptions(out=..., scale=...))` writes what a Kafka Connect
S3 sink would have written from three Debezium connectors (PostgreSQL `ems`,
MySQL `ecomm`, SQL Server `crm`), plus `_manifest.json` and the expected
final state of every bronze table under `_expected/`.
"""

from lakehouse.cdc.generate.generator import GenerateSummary, TopicSummary, generate
from lakehouse.cdc.generate.options import GenerateOptions, OpMix, OptionsError

__all__ = [
    "GenerateOptions",
    "GenerateSummary",
    "OpMix",
    "OptionsError",
    "TopicSummary",
    "generate",
]
