"""`lakehouse cdc generate`: options in, `generate()` called, summary out.

No logic here: the options map one to one onto `GenerateOptions`, whose
defaults are the command's defaults.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ingestion.errors import UserError
from lakehouse.cdc.generate.generator import generate
from lakehouse.cdc.generate.options import (
    DECIMAL_MODES,
    FORMATS,
    GenerateOptions,
    OpMix,
    OptionsError,
)
from lakehouse.cdc.generate.report import ProgressBar, print_summary
from lakehouse.cdc.generate.tickit import TABLES

_DEFAULTS = GenerateOptions(out="-")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options; defaults come from `GenerateOptions`."""
    d = _DEFAULTS
    parser.add_argument("--out", required=True, help="local folder or s3://bucket/prefix")
    parser.add_argument("--scale", type=float, default=d.scale, help="TICKIT scale; 1 = ~425K rows")
    parser.add_argument("--format", choices=FORMATS, default=d.format, help="landing format")
    parser.add_argument("--seed", type=int, default=d.seed, help="same seed, same bytes")
    parser.add_argument(
        "--change-batches",
        type=int,
        default=d.change_batches,
        help="change batches after the snapshot, one day each",
    )
    parser.add_argument(
        "--flush-size", type=int, default=d.flush_size, help="records per landing file"
    )
    parser.add_argument(
        "--partitions", type=int, default=d.partitions, help="Kafka partitions per topic"
    )
    parser.add_argument(
        "--change-fraction",
        type=float,
        default=d.change_fraction,
        help="changes per batch as a fraction of each table's rows",
    )
    parser.add_argument(
        "--op-mix",
        type=_op_mix,
        default=d.op_mix,
        help=f"weights of inserts, updates, deletes (default {d.op_mix})",
    )
    parser.add_argument(
        "--decimal-handling-mode",
        choices=DECIMAL_MODES,
        default=d.decimal_handling_mode,
        help="Debezium decimal.handling.mode",
    )
    parser.add_argument(
        "--truncate-table",
        choices=[*TABLES, "none"],
        default=d.truncate_table,
        help=f"table truncated in change batch {d.truncate_batch} ('none' disables)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar, only the summary"
    )


def _op_mix(text: str) -> OpMix:
    try:
        return OpMix.parse(text)
    except OptionsError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def options_from(args: argparse.Namespace) -> GenerateOptions:
    try:
        return GenerateOptions(
            out=args.out,
            scale=args.scale,
            format=args.format,
            seed=args.seed,
            change_batches=args.change_batches,
            flush_size=args.flush_size,
            partitions=args.partitions,
            change_fraction=args.change_fraction,
            op_mix=args.op_mix,
            decimal_handling_mode=args.decimal_handling_mode,
            truncate_table=None if args.truncate_table == "none" else args.truncate_table,
            show_progress=not args.no_progress,
        )
    except OptionsError as error:
        raise UserError(str(error)) from error


def run(args: argparse.Namespace) -> int:
    """Generate, show progress, print the summary; 0 on success."""
    options = options_from(args)
    with ProgressBar(enabled=options.show_progress) as bar:
        summary = generate(options, progress=bar)
    print_summary(summary)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lakehouse cdc generate", description=__doc__)
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
