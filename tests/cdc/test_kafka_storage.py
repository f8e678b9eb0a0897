"""The KRaft broker's storage is formatted by Kafka's own tool, whatever cluster id is drawn."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

from ingestion.settings import settings
from lakehouse.cdc import chain

LEADING_DASH = uuid.UUID(bytes=b"\xf8" + b"\x01" * 15)  # URL-safe base64: "-AEBAQ..."
PLAIN = uuid.UUID(bytes=b"\x10" * 16)  # "EBAQEBAQEBAQEBAQEBAQEA"


def test_a_cluster_id_drawn_with_a_leading_dash_is_drawn_again(tmp_path: Path, monkeypatch) -> None:
    draws = iter([LEADING_DASH, PLAIN])
    monkeypatch.setattr(chain.uuid, "uuid4", lambda: next(draws))
    conf = dataclasses.replace(settings(), home=tmp_path)
    chain.format_broker_storage(conf, log=lambda _: None)
    meta = (tmp_path / "cdc" / "kafka" / "data" / "meta.properties").read_text()
    assert "cluster.id=EBAQEBAQEBAQEBAQEBAQEA\n" in meta
