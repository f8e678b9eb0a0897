"""The benchmark's CDC: generate once, then hand it to each contender batch by batch.

Every contender gets its own landing zone, filled batch by batch from the one
generated copy, so each run sees exactly the files of its phase (snapshot, then
change batch k), as if the S3 sink had just written them. Files are hard links
(no copy time, no extra disk) touched to the staging time, because
HoodieStreamer's DFS source picks new files by modification time.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.cdc.generate.report import ProgressBar

# The unwrapped format (ExtractNewRecordState) is the one DeltaStreamer reads.
FORMAT = "unwrapped"
EVENT_OPS = ("r", "c", "u", "d")  # the SMT drops truncates; tombstones are not events
TOMBSTONE = "null"


@dataclass(frozen=True)
class Landing:
    """A generated landing zone and its manifest."""

    root: Path
    manifest: dict

    @property
    def batches(self) -> int:
        return len(self.manifest["batches"])

    def topics(self) -> dict[str, str]:
        """topic -> bronze table name."""
        return {topic: info["table"] for topic, info in self.manifest["topics"].items()}

    def files(self, batch: int) -> dict[str, list[str]]:
        """topic -> the batch's files, relative to the root."""
        return {
            topic: info["files"].get(str(batch), [])
            for topic, info in self.manifest["topics"].items()
        }

    def events(self, batch: int) -> int:
        """Change events (snapshot reads, inserts, updates, deletes) in one batch."""
        return sum(
            info["events_by_batch"].get(str(batch), {}).get(op, 0)
            for info in self.manifest["topics"].values()
            for op in EVENT_OPS
        )

    @property
    def rows(self) -> int:
        """Rows of the snapshot: the scale's size."""
        return self.events(0)


def generate_landing(
    out: Path, scale: float, change_batches: int, progress: bool, faults: bool = True
) -> Landing:
    """Generate TICKIT CDC in the unwrapped format into `out` (emptied first).

    `faults` keeps the generator's truncate and schema change in change batch 2;
    without them every batch is an ordinary day of changes (what an hourly
    build after the first one sees in `bench dbt`).
    """
    shutil.rmtree(out, ignore_errors=True)
    plain = {} if faults else {"truncate_table": None, "schema_change_batch": change_batches + 1}
    options = GenerateOptions(
        out=str(out), scale=scale, format=FORMAT, change_batches=change_batches, **plain
    )
    with ProgressBar(enabled=progress) as bar:
        generate(options, bar)
    return open_landing(out)


def reuse_or_generate(
    source: Path, scale: float, batches: int, log: Callable[[str], None], faults: bool = True
) -> Landing:
    """The generated CDC in `source`, reused when an earlier run generated the same options."""
    manifest = source / "_manifest.json"
    if manifest.exists():
        options = json.loads(manifest.read_text())["options"]
        if (
            options["scale"] == scale
            and options["change_batches"] == batches
            and (options["truncate_table"] is not None) == faults
        ):
            log(f"reusing the CDC generated earlier in {source}")
            return open_landing(source)
    log(f"generating TICKIT CDC, scale {scale}, {batches} change batch(es) -> {source}")
    return generate_landing(source, scale, batches, progress=True, faults=faults)


def open_landing(root: Path) -> Landing:
    return Landing(root, json.loads((root / "_manifest.json").read_text()))


def stage(
    landing: Landing, batch: int, target: Path, drop_tombstones: bool = False
) -> dict[str, list[str]]:
    """Put one batch's files into `target` (same layout); return topic -> staged paths.

    `drop_tombstones` writes copies without the tombstone lines, as the SMT's
    `drop.tombstones=true` would: HoodieStreamer's JSON source cannot parse them.
    """
    staged: dict[str, list[str]] = {}
    for topic, files in landing.files(batch).items():
        for relative in files:
            source = landing.root / relative
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.unlink(missing_ok=True)
            if drop_tombstones:
                with source.open() as lines, destination.open("w") as out:
                    out.writelines(line for line in lines if line.strip() != TOMBSTONE)
            else:
                os.link(source, destination)
                os.utime(destination)  # "just written", for sources that select by mtime
            staged.setdefault(topic, []).append(str(destination))
    return staged
