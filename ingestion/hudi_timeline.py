"""Where one Hudi write spent its seconds, read off its timeline files.

A Hudi commit leaves `<t>.<action>.requested`, an inflight file and the
completed `<t>_<completion>.<action>` in `.hoodie/timeline/`, and its metadata
table (files, record index) commits a deltacommit of its own in between. The
modification times of those files split the write into: setup before the
commit was requested, index lookup and planning (requested -> inflight),
writing data files (inflight -> metadata table), the metadata table's own
commit, finalizing, and the table services after the commit (clean, archive,
compaction). One listing of two folders; no Hudi client, no Spark job.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from ingestion.paths import to_hadoop_uri, to_local_path

# A Hudi table's own files, relative to the table's path.
META_FOLDER = ".hoodie"
# A Hudi table is at a path once META_FOLDER holds this file: a writer creating
# the table makes the folder first, and a reader that took the folder alone for
# a table failed on the missing properties while the table was created.
TABLE_PROPERTIES = "hoodie.properties"
# Where a Hudi 1.x table keeps its active timeline, relative to the table's path.
TIMELINE = f"{META_FOLDER}/timeline"
# The metadata table's own path (a Hudi table inside the table's META_FOLDER).
METADATA_TABLE = f"{META_FOLDER}/metadata"

COMPLETED = re.compile(r"^(?P<t>\d+)_(?P<done>\d+)\.(?P<action>commit|deltacommit|replacecommit)$")


def _mtimes(spark: Any, folder: str) -> dict[str, float] | None:
    """File name -> modification time in seconds since the epoch (None: no such folder).

    A local folder is listed by the OS: through Hadoop, every file costs several
    calls from Python to the JVM, which added up to a quarter of a table's
    calls in each micro-batch (decision 0021).
    """
    local = to_local_path(folder)
    return _local_mtimes(local) if local is not None else _store_mtimes(spark, folder)


def _local_mtimes(folder: Path) -> dict[str, float] | None:
    """What Hadoop's local file system lists: every file but its own `.<name>.crc` checksums,
    and, as Hadoop does, none removed between the listing and its stat (an archived instant)."""
    try:
        with os.scandir(folder) as listed:
            entries = [e for e in listed if not (e.name[0] == "." and e.name.endswith(".crc"))]
    except FileNotFoundError:
        return None
    times = {}
    for entry in entries:
        with contextlib.suppress(FileNotFoundError):
            times[entry.name] = entry.stat().st_mtime
    return times


def _store_mtimes(spark: Any, folder: str) -> dict[str, float] | None:
    """A remote store's folder (s3a://...), listed through Hadoop."""
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(folder)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    try:
        statuses = fs.listStatus(path)
    except Exception as error:  # py4j wraps Hadoop's FileNotFoundException
        if "FileNotFoundException" in str(error):
            return None
        raise
    return {s.getPath().getName(): s.getModificationTime() / 1000 for s in statuses}


def timeline_files(spark: Any, path: str) -> dict[str, float] | None:
    """The table's timeline files and their times; None when there is no Hudi table."""
    base = to_hadoop_uri(path).rstrip("/")
    meta = _mtimes(spark, f"{base}/{META_FOLDER}")
    if meta is None or TABLE_PROPERTIES not in meta:
        return None
    return _mtimes(spark, f"{base}/{TIMELINE}") or {}


def timeline_folder(table: Path) -> Path:
    """A local table's timeline folder, whose commit files a reader without Spark opens."""
    return table / TIMELINE


def newest_completed(files: dict[str, float]) -> str | None:
    """The file name of the newest completed commit (the table's version), if any."""
    done = [(m["t"], name) for name in files if (m := COMPLETED.match(name))]
    return max(done)[1] if done else None


def _instant(files: dict[str, float], instant: str | None = None) -> tuple[str, dict] | None:
    """The newest completed instant (or `instant`), with its requested/inflight/completed times."""
    done = [(m["t"], name) for name in files if (m := COMPLETED.match(name))]
    if instant is not None:
        done = [d for d in done if d[0] == instant]
    if not done:
        return None
    t, completed = max(done)
    stamps = {"completed": files[completed]}
    for name, mtime in files.items():
        if name.startswith(t + ".") and name.endswith(".requested"):
            stamps["requested"] = mtime
        elif name.startswith(t + ".") and name.endswith("inflight"):
            stamps["inflight"] = mtime
    return t, stamps


def write_phases(spark: Any, path: str, started: float, ended: float) -> dict[str, float]:
    """Seconds per phase of the newest commit at `path`, written between `started` and `ended`.

    `started` and `ended` are wall-clock (time.time()) bounds of the write call.
    """
    found = _instant(timeline_files(spark, path) or {})
    if found is None or "requested" not in found[1]:
        return {}
    instant, data = found
    in_metadata = _instant(
        timeline_files(spark, f"{path.rstrip('/')}/{METADATA_TABLE}") or {}, instant
    )
    metadata = in_metadata[1] if in_metadata else None
    inflight = data.get("inflight", data["requested"])
    files_done = metadata.get("requested", data["completed"]) if metadata else data["completed"]
    phases = {
        "hudi_setup": data["requested"] - started,
        "hudi_index_and_plan": inflight - data["requested"],
        "hudi_write_files": files_done - inflight,
        "hudi_finalize": data["completed"] - (metadata["completed"] if metadata else files_done),
        "hudi_table_services": ended - data["completed"],
    }
    if metadata:
        phases["hudi_metadata_table"] = metadata["completed"] - metadata.get(
            "requested", files_done
        )
    return {name: max(0.0, seconds) for name, seconds in phases.items()}
