"""Acceptance 4: writing to an s3:// URI against a local S3-compatible server."""

from __future__ import annotations

import hashlib

import pytest

from ingestion.errors import UserError
from lakehouse.cdc.generate import GenerateOptions, generate


def test_generate_to_s3_writes_the_same_objects_as_locally(s3_env, tmp_path):
    client = s3_env
    client.create_bucket(Bucket="landing")
    settings = {"scale": 0.002, "change_batches": 2, "flush_size": 100, "format": "avro"}

    summary = generate(GenerateOptions(out="s3://landing/cdc/tickit", **settings))
    generate(GenerateOptions(out=str(tmp_path), **settings))

    objects = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="landing"):
        for item in page.get("Contents", []):
            objects[item["Key"]] = item["Size"]
    assert "cdc/tickit/_manifest.json" in objects
    assert "cdc/tickit/_expected/sales.jsonl" in objects
    landed = {key for key in objects if key.startswith("cdc/tickit/topics/")}
    assert landed == {f"cdc/tickit/{f.path}" for f in summary.files}
    local = {
        p.relative_to(tmp_path).as_posix(): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file()
    }
    assert len(local) == len(objects)
    for path, data in local.items():
        body = client.get_object(Bucket="landing", Key=f"cdc/tickit/{path}")["Body"].read()
        assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest(), path


def test_missing_bucket_is_a_user_error(s3_env):
    with pytest.raises(UserError, match="s3://no-such-bucket"):
        generate(GenerateOptions(out="s3://no-such-bucket/x", scale=0.001, change_batches=0))
