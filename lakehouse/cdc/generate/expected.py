"""The expected final state of each bronze table, as docs/contracts.md defines it.

One JSON object per key, sorted by key: every source column of the table's
final schema (dates `YYYY-MM-DD`, timestamps `YYYY-MM-DD HH:MM:SS` UTC,
decimals as strings with their scale, booleans as JSON booleans) plus
`_deleted`: true when the key's last event was a delete, the row then being
the delete's before-image. A truncate deletes every row it finds, but the
generator re-inserts them at once, so truncated rows end live.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import date, timedelta

from lakehouse.cdc.generate.encoding import decimal_precision_scale, decimal_text
from lakehouse.cdc.generate.state import SourceDatabase
from lakehouse.cdc.generate.tickit import SECONDS_PER_DAY, Column, Table, columns_of

_EPOCH = date(1970, 1, 1)
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def iso_date(day: int) -> str:
    return (_EPOCH + timedelta(days=day)).isoformat()


def iso_timestamp(seconds: int) -> str:
    """`YYYY-MM-DD HH:MM:SS` UTC (the generator's timestamps are whole seconds)."""
    day, rest = divmod(seconds, SECONDS_PER_DAY)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{iso_date(day)} {hours:02d}:{minutes:02d}:{secs:02d}"


def _renderer(column: Column) -> Callable[[object], object] | None:
    if column.kind == "date":
        return iso_date  # type: ignore[return-value]
    if column.kind == "timestamp":
        return iso_timestamp  # type: ignore[return-value]
    if column.kind == "decimal":
        _, scale = decimal_precision_scale(column.sql_type)
        return lambda unscaled: decimal_text(unscaled, scale)  # type: ignore[arg-type]
    return None


def expected_rows(db: SourceDatabase, table: Table) -> list[dict[str, object]]:
    """The final state of one table: live rows and deleted keys' before-images."""
    columns = columns_of(table, db.schema_version[table.name])
    renderers = [_renderer(column) for column in columns]
    names = [column.name for column in columns]
    states = [(key, row, False) for key, row in db.rows[table.name].items()]
    states += [(key, row, True) for key, row in db.deleted[table.name].items()]
    out = []
    for _key, row, deleted in sorted(states, key=lambda state: state[0]):
        padded = list(row) + [None] * (len(names) - len(row))
        values = [
            value if render is None or value is None else render(value)
            for render, value in zip(renderers, padded, strict=True)
        ]
        record = dict(zip(names, values, strict=True))
        record["_deleted"] = deleted
        out.append(record)
    return out


def expected_file(rows: list[dict[str, object]]) -> bytes:
    """`_expected/<table>.jsonl`: one compact JSON object per line."""
    return "".join(_JSON(row) + "\n" for row in rows).encode("utf-8")


def checksum(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
