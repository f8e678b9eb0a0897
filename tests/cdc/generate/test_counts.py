"""Acceptance 1 and 5: TICKIT's cardinalities in the snapshot, linear in the scale, fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakehouse.cdc.generate import GenerateOptions, generate

SCALE_1 = {
    "tickit.ems.category": 11,
    "tickit.ecomm.date": 365,
    "tickit.ems.event": 8_798,
    "tickit.ems.venue": 202,
    "tickit.crm.user": 49_990,
    "tickit.ecomm.listing": 192_497,
    "tickit.ecomm.sale": 172_456,
}
# round(n * 0.01), categories and dates fixed.
SCALE_001 = {
    "tickit.ems.category": 11,
    "tickit.ecomm.date": 365,
    "tickit.ems.event": 88,
    "tickit.ems.venue": 2,
    "tickit.crm.user": 500,
    "tickit.ecomm.listing": 1_925,
    "tickit.ecomm.sale": 1_725,
}


def snapshot_lines(root: Path, manifest: dict, topic: str) -> list[bytes]:
    lines: list[bytes] = []
    for path in manifest["topics"][topic]["files"]["0"]:
        lines.extend((root / path).read_bytes().splitlines())
    return lines


def test_scale_1_snapshot_has_tickit_counts(tmp_path):
    generate(GenerateOptions(out=str(tmp_path), scale=1, change_batches=0))

    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert sum(SCALE_1.values()) == 424_319
    for topic, count in SCALE_1.items():
        entry = manifest["topics"][topic]
        assert entry["events"] == {"r": count, "c": 0, "u": 0, "d": 0, "t": 0}
        lines = snapshot_lines(tmp_path, manifest, topic)
        assert len(lines) == count
        # Every snapshot line is an `r` event; spot-check the first and last ones.
        for line in (lines[0], lines[-1]):
            assert json.loads(line)["payload"]["op"] == "r"
        expected = (tmp_path / "_expected" / f"{entry['table']}.jsonl").read_text()
        assert expected.count("\n") == count


def test_scale_001_is_proportional(generated):
    _summary, landing = generated(format="json")
    for topic, count in SCALE_001.items():
        entry = landing.manifest["topics"][topic]
        assert entry["events_by_batch"]["0"] == {"r": count, "c": 0, "u": 0, "d": 0, "t": 0}
        batch_0 = [r for r in landing.records[topic] if r.path in entry["files"]["0"]]
        assert len(batch_0) == count
        assert all(r.value["payload"]["op"] == "r" for r in batch_0)


@pytest.mark.parametrize(
    ("scale", "users", "sales"), [(0.001, 50, 172), (0.1, 4_999, 17_246), (0.0001, 5, 17)]
)
def test_row_counts_scale_linearly_with_a_floor_of_one(scale, users, sales):
    from lakehouse.cdc.generate.population import populate

    counts = {name: len(rows) for name, rows in populate(7, scale).rows.items()}
    assert counts["users"] == users
    assert counts["sales"] == sales
    assert counts["venue"] == max(1, round(202 * scale))
    assert counts["category"] == 11
    assert counts["date"] == 365
