"""One-line errors: a broken setup gets the cause and the fix, exit 2, and an untouched lake.

A run that fails so leaves its run record all the same: status failed, its error.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ingestion.config import TABLES_FILE, ConfigError, load_tables

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
INJECTIONS = ["x`; drop table sales; --", "a b", "sales'--", "../../etc", "名前"]


def _lakehouse(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([LAKEHOUSE, *args], env=env, capture_output=True, text=True, timeout=120)


def _assert_one_line(done: subprocess.CompletedProcess, expected: list[str]) -> None:
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    for text in expected:
        assert text in lines[0]
    assert "Traceback" not in done.stdout + done.stderr


def _ingest(tmp_path: Path, free_port, *args: str, **env: str) -> subprocess.CompletedProcess:
    landing = tmp_path / "landing"
    landing.mkdir(exist_ok=True)
    environment = {
        **os.environ,
        "LAKEHOUSE_HOME": str(tmp_path / "home"),  # its run records apart
        "LAKEHOUSE_LANDING": str(landing),
        "LAKEHOUSE_LAKE": str(tmp_path / "lake"),
        # A port nothing listens on, unless a case says otherwise: no stack needed.
        "LAKEHOUSE_METASTORE_PORT": str(free_port()),
        **env,
    }
    return _lakehouse(["ingest", *args], environment)


CASES = {
    "catalog down": ({}, (), ["catalog", "is not reachable", "lakehouse stack up"]),
    "landing missing": (
        {"LAKEHOUSE_LANDING": "/nonexistent/landing"},
        (),
        ["/nonexistent/landing does not exist", "lakehouse cdc generate"],
    ),
    "lake not a folder": (
        {"LAKEHOUSE_LAKE": "/etc/hostname/lake"},
        (),
        ["/etc/hostname is a file, not a folder", "LAKEHOUSE_LAKE"],
    ),
    "unknown table": ({}, ("--tables", "sales,nope"), ["unknown table(s): nope", "known: "]),
    "database injection": (
        {"LAKEHOUSE_BRONZE_DATABASE": "x`; drop database y; --"},
        (),
        ["bronze_database", "not a plain name"],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_broken_setup_is_one_line_with_the_fix(case: str, tmp_path: Path, free_port) -> None:
    env, args, expected = CASES[case]
    done = _ingest(tmp_path, free_port, *args, **env)
    _assert_one_line(done, expected)
    assert not (tmp_path / "lake").exists()  # nothing written
    [record] = _failed_records(tmp_path / "home")
    assert done.stderr.strip() == f"error: {record['error']}"
    assert record["seconds"] >= 0 and record["tables"] == []


def _failed_records(home: Path) -> list[dict]:
    """The ingest run records under a home, each checked to be a failed run's."""
    records = [json.loads(p.read_text()) for p in sorted((home / "runs").glob("ingest-*.json"))]
    assert all(r["status"] == "failed" and r["error"] for r in records), records
    return records


def test_an_unexpected_failure_names_its_root_cause_and_is_recorded(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A Spark failure (a stand-in here): the line, the saved trace and the record name the root."""
    from lakehouse import cli, ingest_command

    from .java_fakes import ANCIENT, FakeThrowable, Py4JJavaError, hudi_failure

    def spark_fails(*_: object, **__: object) -> None:
        raise Py4JJavaError(hudi_failure(FakeThrowable("o.a.s.SparkUpgradeException", ANCIENT)))

    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(ingest_command, "check_run", spark_fails)
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(tmp_path))
    assert cli.main(["ingest", "--tables", "sales"]) == cli.EXIT_FAILED
    line = capsys.readouterr().err.strip()
    root = "SparkUpgradeException: [INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME] "
    assert line.startswith(f"error: {root}")
    assert "spark.sql.parquet.datetimeRebaseModeInWrite=CORRECTED" in line
    trace = tmp_path / "lakehouse" / f"error-{os.getpid()}.log"
    assert f"(full trace in {trace}; rerun with --debug to print it)" in line
    assert trace.read_text().rstrip().endswith("\tat org.example.Frame.f2(Frame.java:2)")
    [record] = _failed_records(tmp_path / "home")
    assert record["error"].startswith(root) and record["asked"] == ["sales"]
    assert line.startswith(f"error: {record['error']} (full trace in ")


def test_dbt_with_the_thrift_server_down_is_one_line(free_port) -> None:
    env = {**os.environ, "LAKEHOUSE_THRIFT_PORT": str(free_port())}
    done = _lakehouse(["dbt", "--", "build"], env)
    _assert_one_line(done, ["Spark Thrift Server", "is not reachable", "lakehouse stack up"])


def test_maintain_says_when_nothing_is_due_and_names_an_unknown_table(tmp_path: Path) -> None:
    """An empty lake has nothing to compact or cluster: read off the timelines, no Spark started."""
    done = _lakehouse(["maintain"], {**os.environ, "LAKEHOUSE_LAKE": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "maintain: nothing due on 7 table(s)"
    unknown = _lakehouse(["maintain", "--tables", "sales,nosuch"], dict(os.environ))
    _assert_one_line(unknown, ["unknown table(s): nosuch", "known: category"])


def test_s3_bucket_missing_or_no_credentials_is_one_line(s3_env, tmp_path: Path, free_port) -> None:
    s3_env.create_bucket(Bucket="errors-landing")
    missing = _ingest(
        tmp_path, free_port, LAKEHOUSE_LANDING="s3://errors-landing/landing",
        LAKEHOUSE_LAKE="s3://no-such-bucket/lake",
    )  # fmt: skip
    _assert_one_line(missing, ["s3://no-such-bucket/lake", "does not exist", "LAKEHOUSE_LAKE"])
    without_keys = {
        key: value for key, value in os.environ.items()
        if key not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    }  # fmt: skip
    # No instance-metadata lookups either: the credential chain must end here.
    without_keys |= {
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_CONFIG_FILE": "/dev/null",
        "LAKEHOUSE_LANDING": "s3://errors-landing/landing",
        "LAKEHOUSE_LAKE": str(tmp_path / "lake"),
        "LAKEHOUSE_METASTORE_PORT": str(free_port()),
    }
    done = _lakehouse(["ingest"], without_keys)
    _assert_one_line(done, ["no S3 credentials", "AWS_ACCESS_KEY_ID"])
    assert not (tmp_path / "lake").exists()


def _config_with(tmp_path: Path, edit) -> Path:
    document = yaml.safe_load(TABLES_FILE.read_text())
    edit(document)
    path = tmp_path / "tables.yml"
    path.write_text(yaml.safe_dump(document))
    return path


EDITS = {
    "table name": lambda doc, bad: doc["tables"].update({bad: doc["tables"].pop("sales")}),
    "database": lambda doc, bad: doc["tables"]["sales"].update({"database": bad}),
    "key": lambda doc, bad: doc["tables"]["sales"].update({"key": [bad]}),
    "column": lambda doc, bad: doc["tables"]["sales"]["columns"].update({bad: "string"}),
    "partition": lambda doc, bad: doc["tables"]["sales"].update({"partition_by": [bad]}),
    "topic": lambda doc, bad: doc["tables"]["sales"].update({"topic": bad}),
}


@pytest.mark.parametrize("field", EDITS)
@pytest.mark.parametrize("bad", INJECTIONS)
def test_injection_strings_in_the_table_config_are_config_errors(
    field: str, bad: str, tmp_path: Path
) -> None:
    if field == "topic" and bad == "../../etc":
        bad = "../etc/passwd"  # dots are legal in topics; a slash is not
    path = _config_with(tmp_path, lambda doc: EDITS[field](doc, bad))
    with pytest.raises(ConfigError) as raised:
        load_tables(path)
    assert str(path) in str(raised.value)
    assert repr(bad) in str(raised.value) or bad in str(raised.value)


@pytest.fixture
def s3_with_auth(free_port) -> Iterator[str]:
    """A moto S3 server that checks signatures after its first four (set-up) requests."""
    from tests.conftest import MOTO_SERVER, wait_until_healthy

    port = free_port()
    server = subprocess.Popen(
        [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "4"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_healthy(server, f"http://127.0.0.1:{port}/moto-api/", "moto_server")
        yield f"http://127.0.0.1:{port}"
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=15)


def test_s3_credentials_wrong_is_one_line(s3_with_auth: str, tmp_path: Path, free_port) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_with_auth)
    iam = boto3.client("iam", endpoint_url=s3_with_auth)
    s3.create_bucket(Bucket="guarded")  # the four requests before checks start
    iam.create_user(UserName="lake")
    key = iam.create_access_key(UserName="lake")["AccessKey"]
    allow_all = {"Version": "2012-10-17",
                 "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}  # fmt: skip
    iam.put_user_policy(UserName="lake", PolicyName="all", PolicyDocument=json.dumps(allow_all))
    cases = {
        "unknown key": ("AKIAUNKNOWNKEY000000", "whatever"),
        "wrong secret": (key["AccessKeyId"], "not-the-secret"),
    }
    for case, (key_id, secret) in cases.items():
        done = _ingest(
            tmp_path, free_port, AWS_ENDPOINT_URL=s3_with_auth, LAKEHOUSE_LAKE="s3://guarded/lake",
            AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret,
        )  # fmt: skip
        _assert_one_line(done, ["s3://guarded/lake", "S3 refused these credentials", "AWS_"])
        assert secret not in done.stderr, case
    with_good_keys = boto3.client(
        "s3", endpoint_url=s3_with_auth,
        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"],
    )  # fmt: skip
    assert with_good_keys.list_objects_v2(Bucket="guarded")["KeyCount"] == 0
