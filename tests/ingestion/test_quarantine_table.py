"""`<bronze database>._quarantine` exists from a database's first ingest, empty until a reject.

A dashboard, a dbt test or an operator's `select` must find it before anything
was ever set aside, and the rejects written later go into that same table.
"""

from __future__ import annotations

import json
from pathlib import Path

from ingestion.paths import QUARANTINE

from .bronze import make_landing, run_ingest, settings_for, tables_for
from .test_ingest_faults import CATEGORY_TOPIC, NEWER, category_update, topic_files, write_lines

DATABASE = "quarantine_first"


def test_a_clean_first_ingest_leaves_an_empty_quarantine(spark, tmp_path: Path) -> None:
    landing = make_landing(tmp_path / "landing", change_batches=0)
    conf = settings_for(landing, tmp_path / "lake")
    tables = tables_for(DATABASE, ("category",))
    first = run_ingest(spark, conf, tables)["category"]
    assert first.committed and first.quarantined == 0
    assert spark.sql(f"select count(*) from {DATABASE}.{QUARANTINE}").first()[0] == 0
    columns = [f.name for f in spark.table(f"{DATABASE}.{QUARANTINE}").schema.fields]
    assert [c for c in columns if not c.startswith("_hoodie")] == [
        "raw", "source_file", "line", "table_name", "reason", "quarantined_at",
    ]  # fmt: skip

    template = json.loads(topic_files(landing, CATEGORY_TOPIC)[0].read_text().splitlines()[0])
    write_lines(landing, CATEGORY_TOPIC, 100, [
        category_update(template, 5, "good", NEWER),
        "this is not json",
    ])  # fmt: skip
    second = run_ingest(spark, conf, tables)["category"]
    assert second.quarantined == 1
    rows = spark.sql(f"select line, table_name, reason from {DATABASE}.{QUARANTINE}").collect()
    assert [tuple(r) for r in rows] == [(1, "category", "line is not a JSON object")]
