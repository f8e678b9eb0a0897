"""Run dbt with the project's environment: profiles folder, target, Spark settings.

dbt itself is unchanged; this only sets what a user would otherwise export by
hand, so `dbt` behaves the same from `make`, `lakehouse dbt`, jobs and tests.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ingestion.config import load_document
from ingestion.discovery import served_tables
from ingestion.settings import PROJECT_DIR, Settings, settings
from ingestion.spark import spark_conf, spark_env
from lakehouse.thrift_client import require_server

PROFILES_DIR = PROJECT_DIR / "profiles"
# dbt commands that never connect to the warehouse.
OFFLINE_COMMANDS = ("parse", "deps", "clean", "ls", "list", "init", "debug", "--version", "-h")
# What dbt reads from conf/tables.yml: each bronze table's record key columns
# (dbt_project.yml's var `bronze_record_keys`, JSON).
RECORD_KEYS_VARIABLE = "LAKEHOUSE_BRONZE_RECORD_KEYS"


def pyspark_submit_args(conf: Settings | None = None) -> str:
    """The Spark settings as spark-submit arguments, for dbt's in-process `session` target."""
    values = spark_conf(conf)
    args = ["--driver-memory", values.pop("spark.driver.memory")]
    for key, value in values.items():
        args += ["--conf", f"{key}={value}"]
    return shlex.join([*args, "pyspark-shell"])


def dbt_variables(conf: Settings | None = None) -> dict[str, str]:
    """The settings and table config that profiles.yml and dbt_project.yml read.

    dbt cannot read conf/*.yml itself, so every value it needs comes through
    these variables, set from the same settings ingestion uses: the two can
    never disagree on a database or schema name. The settings keep their
    LAKEHOUSE_<KEY> names, so an override in the shell reaches both alike.
    """
    conf = conf or settings()
    tables = served_tables(conf, load_document(database=conf.bronze_database)).tables
    keys = {name: list(table.key) for name, table in tables.items()}
    return {
        "LAKEHOUSE_THRIFT_HOST": conf.thrift_host,
        "LAKEHOUSE_THRIFT_PORT": str(conf.thrift_port),
        "LAKEHOUSE_BRONZE_DATABASE": conf.bronze_database,
        "LAKEHOUSE_DBT_SCHEMA": conf.dbt_schema,
        "LAKEHOUSE_MARTS_SCHEMA": conf.marts_schema,
        "LAKEHOUSE_FRESHNESS_WARN_HOURS": f"{conf.freshness_warn_hours:g}",
        RECORD_KEYS_VARIABLE: json.dumps(keys, separators=(",", ":")),
    }


def dbt_env(conf: Settings | None = None, target: str | None = None) -> dict[str, str]:
    """Environment for a dbt process: profiles, the dbt variables, Spark settings."""
    conf = conf or settings()
    env = dict(os.environ)
    env["DBT_PROFILES_DIR"] = str(PROFILES_DIR)
    env.update(dbt_variables(conf))
    env["PYSPARK_SUBMIT_ARGS"] = pyspark_submit_args(conf)
    env.update(spark_env(conf))  # the `session` target's Spark driver binds loopback too
    env.setdefault("DBT_TARGET_PATH", str(conf.dbt_target_path))
    if target:
        env["DBT_TARGET"] = target
    return env


def dbt_executable() -> str:
    """The dbt of the running virtual environment."""
    return str(Path(sys.executable).with_name("dbt"))


def run_dbt(
    args: Sequence[str], conf: Settings | None = None, target: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `dbt <args>` from the repository root; output goes to the terminal.

    On the local target, a command that needs the Thrift server fails first
    with one line when the server is down, instead of dbt's retries and trace.
    """
    effective = target or os.environ.get("DBT_TARGET", "local")
    if effective == "local" and args and args[0] not in OFFLINE_COMMANDS:
        require_server(conf)
    return subprocess.run(
        [dbt_executable(), *args],
        cwd=PROJECT_DIR,
        env=dbt_env(conf, target),
        check=False,
        text=True,
    )


def activate_exports(conf: Settings | None = None) -> str:
    """Shell exports that make a plain `dbt` behave like `lakehouse dbt` (the venv's activate).

    They are the settings at activation time: after editing conf/*.yml, activate again.
    """
    values = {
        "DBT_PROFILES_DIR": str(PROFILES_DIR),
        **dbt_variables(conf),
        "PYSPARK_SUBMIT_ARGS": pyspark_submit_args(conf),
        **spark_env(conf),
    }
    return "\n".join(f"export {name}={shlex.quote(value)}" for name, value in values.items())


if __name__ == "__main__":
    # `python -m lakehouse.dbt_wrapper` prints the exports, for the venv's activate script.
    print(activate_exports())
