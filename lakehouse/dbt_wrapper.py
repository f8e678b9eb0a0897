"""Run dbt with the project's environment: profiles folder, target, Spark settings.

dbt itself is unchanged; this only sets what a user would otherwise export by
hand, so `dbt` behaves the same from `make`, `lakehouse dbt`, jobs and tests.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ingestion.settings import PROJECT_DIR, Settings, settings
from ingestion.spark import spark_conf, spark_env

PROFILES_DIR = PROJECT_DIR / "profiles"


def pyspark_submit_args(conf: Settings | None = None) -> str:
    """The Spark settings as spark-submit arguments, for dbt's in-process `session` target."""
    values = spark_conf(conf)
    args = ["--driver-memory", values.pop("spark.driver.memory")]
    for key, value in values.items():
        args += ["--conf", f"{key}={value}"]
    return shlex.join([*args, "pyspark-shell"])


def dbt_env(conf: Settings | None = None, target: str | None = None) -> dict[str, str]:
    """Environment for a dbt process: profiles, thrift port, Spark settings."""
    conf = conf or settings()
    env = dict(os.environ)
    env["DBT_PROFILES_DIR"] = str(PROFILES_DIR)
    env["LAKEHOUSE_THRIFT_HOST"] = conf.thrift_host
    env["LAKEHOUSE_THRIFT_PORT"] = str(conf.thrift_port)
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
    """Run `dbt <args>` from the repository root; output goes to the terminal."""
    return subprocess.run(
        [dbt_executable(), *args],
        cwd=PROJECT_DIR,
        env=dbt_env(conf, target),
        check=False,
        text=True,
    )


if __name__ == "__main__":
    # `python -m lakehouse.dbt_wrapper` prints the exports, for the venv's activate script.
    print(f"export DBT_PROFILES_DIR={shlex.quote(str(PROFILES_DIR))}")
    print(f"export PYSPARK_SUBMIT_ARGS={shlex.quote(pyspark_submit_args())}")
    for name, value in spark_env().items():
        print(f"export {name}={shlex.quote(value)}")
