"""Acceptance 4: writing to an s3:// URI against a local S3-compatible server."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from ingestion.generate import GenerateOptions, generate
from ingestion.output import UserError

MOTO_SERVER = Path(sys.executable).parent / "moto_server"
START_DEADLINE_S = 30


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on a free loopback port, stopped by its pid afterwards."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_healthy(server, f"{endpoint}/moto-api/")
        yield endpoint
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=15)


def _wait_until_healthy(server: subprocess.Popen, url: str) -> None:
    """Poll the health URL until it answers; between tries wait on the process itself."""
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        try:
            server.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"moto_server exited with {server.returncode}")
    raise RuntimeError(f"moto_server not healthy within {START_DEADLINE_S} s")


@pytest.fixture
def s3_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    client = boto3.client("s3")
    return client


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
