"""`lakehouse cdc generate`: options map onto GenerateOptions; summary printed."""

from __future__ import annotations

import argparse
import json

import pytest

from ingestion.errors import UserError
from lakehouse.cdc.generate import command
from lakehouse.cdc.generate.options import GenerateOptions, OpMix, OptionsError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_defaults_come_from_the_options_dataclass():
    options = command.options_from(parse("--out", "/tmp/x"))
    assert options == GenerateOptions(out="/tmp/x", show_progress=True)
    assert (options.scale, options.format, options.change_batches) == (1.0, "json", 3)
    assert options.truncate_table == "category"


def test_every_option_is_passed_through():
    args = parse(
        "--out", "s3://b/p", "--scale", "0.5", "--format", "avro", "--seed", "9",
        "--change-batches", "5", "--flush-size", "10", "--partitions", "3",
        "--change-fraction", "0.05", "--op-mix", "c=1,u=1,d=2",
        "--decimal-handling-mode", "string", "--truncate-table", "none", "--no-progress",
    )  # fmt: skip
    options = command.options_from(args)
    assert options.out == "s3://b/p" and options.scale == 0.5 and options.format == "avro"
    assert (options.seed, options.change_batches, options.flush_size) == (9, 5, 10)
    assert (options.partitions, options.change_fraction) == (3, 0.05)
    assert options.op_mix.weights() == (0.25, 0.25, 0.5)
    assert options.decimal_handling_mode == "string"
    assert options.truncate_table is None and options.show_progress is False


def test_bad_values_are_user_errors():
    with pytest.raises(UserError, match="--scale"):
        command.options_from(parse("--out", "x", "--scale", "0"))
    with pytest.raises(SystemExit):
        parse("--out", "x", "--op-mix", "c=1,x=2")
    with pytest.raises(OptionsError, match="--op-mix"):
        OpMix.parse("c=a")


def test_run_writes_and_prints_a_summary(tmp_path, capsys):
    code = command.run(
        parse("--out", str(tmp_path), "--scale", "0.002", "--change-batches", "1", "--no-progress")
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("generated ")
    for topic in ("tickit.ems.category", "tickit.ecomm.sale", "tickit.crm.user"):
        assert topic in printed
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert manifest["options"]["change_batches"] == 1


def test_module_entry_point_reports_errors(capsys):
    assert command.main(["--out", "ftp://x"]) == 2
    assert "only local folders and s3://" in capsys.readouterr().err


def test_partitions_spread_keys_and_keep_each_key_in_one_partition(generated):
    _, landing = generated(format="json", partitions=3)
    partition_of_key: dict[int, set[int]] = {}
    for record in landing.records["tickit.ecomm.sale"]:
        if record.tombstone:
            continue
        key = (record.value["payload"]["after"] or record.value["payload"]["before"])["salesid"]
        partition_of_key.setdefault(key, set()).add(record.partition)
    assert all(len(parts) == 1 for parts in partition_of_key.values())
    assert {p for parts in partition_of_key.values() for p in parts} == {0, 1, 2}
