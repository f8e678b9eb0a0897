"""Start the project's Airflow: its own venv, AIRFLOW_HOME under the stack home, the repo's dags/.

Run by the project's interpreter (through `airflow/airflow`), because the
settings (stack home, Thrift port, dbt target path) are the project's; then it
replaces itself with the Airflow environment's `airflow` (or `python`), so
the user's ~/airflow and any global Airflow are never touched.

    airflow/airflow dags test lakehouse__hourly      # one run, in process
    airflow/airflow standalone                       # scheduler, DAG processor, UI: loopback only
    airflow/airflow python script.py                 # the Airflow venv's python, same environment

Before Airflow starts it makes sure there is a current dbt manifest (the DAGs
render the dbt models from it) and a migrated metadata database (SQLite).

`standalone` is this project's: Airflow's own also starts log servers that
listen on every interface (their host is hard-coded), so this one runs the
same four components with `--skip-serve-logs` (the UI reads the task logs
from the local log folder) and the UI on AIRFLOW__API__HOST (127.0.0.1).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse.dbt_wrapper import run_dbt

AIRFLOW_BIN = PROJECT_DIR / ".venv-airflow" / "bin"
# The UI/API port when none is set (8080 is the dbt docs site's).
DEFAULT_API_PORT = "8081"
# What dbt reads to build the manifest: when any is newer, the manifest is stale.
DBT_SOURCES = ("models", "macros", "tests", "analyses", "dbt_project.yml")
DBT_SUFFIXES = {".sql", ".yml", ".yaml", ".md", ".csv"}


def airflow_home(conf: Settings) -> Path:
    return conf.home / "airflow"


def airflow_env(conf: Settings) -> dict[str, str]:
    """The environment of every Airflow process of the project; AIRFLOW__ values set win."""
    home = airflow_home(conf)
    env = dict(os.environ)
    env["AIRFLOW_HOME"] = str(home)
    # `standalone` starts its components as `airflow ...` from the PATH.
    env["PATH"] = os.pathsep.join([str(AIRFLOW_BIN), env.get("PATH", "")])
    # Cosmos runs each dbt task in a temporary copy of the project and reads its
    # artifacts from there; the project's steps get conf's dbt_target_path anyway.
    env.pop("DBT_TARGET_PATH", None)
    defaults = {
        "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT_DIR / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # Parsing reads conf/*.yml and the manifest: no reason to wait long, but
        # a loaded laptop is slower than the 30 s default allows.
        "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": DEFAULT_API_PORT,
        "AIRFLOW__COSMOS__CACHE_DIR": str(home / "cosmos"),
        "AIRFLOW__COSMOS__ENABLE_CACHE": "True",
        # Runs never call out: cosmos would send usage metrics after every task.
        "AIRFLOW__COSMOS__ENABLE_TELEMETRY": "False",
    }
    for key, value in defaults.items():
        env.setdefault(key, value)
    return env


def _newest_mtime(paths: list[Path]) -> float:
    newest = 0.0
    for path in paths:
        files = path.rglob("*") if path.is_dir() else [path]
        stamps = (f.stat().st_mtime for f in files if f.suffix in DBT_SUFFIXES and f.is_file())
        newest = max(newest, *stamps, 0.0)
    return newest


def ensure_manifest(conf: Settings) -> None:
    """Write dbt's manifest (`dbt parse`, no connection needed) when it is missing or stale."""
    manifest = conf.dbt_target_path / "manifest.json"
    sources = [PROJECT_DIR / name for name in DBT_SOURCES]
    if manifest.exists() and manifest.stat().st_mtime >= _newest_mtime(sources):
        return
    print(f"airflow: writing the dbt manifest {manifest} (dbt parse) ...", file=sys.stderr)
    if run_dbt(["parse", "--quiet"], conf).returncode != 0:
        sys.exit("airflow: `dbt parse` failed; the DAGs cannot render the dbt models")


def ensure_database(conf: Settings, env: dict[str, str]) -> None:
    """Create the SQLite metadata database on first use (`airflow standalone` would too)."""
    if (airflow_home(conf) / "airflow.db").exists():
        return
    print(f"airflow: creating the metadata database in {airflow_home(conf)} ...", file=sys.stderr)
    subprocess.run(
        [str(AIRFLOW_BIN / "airflow"), "db", "migrate"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


# What `standalone` runs, none of them serving logs on a network port.
COMPONENTS = (
    ["scheduler", "--skip-serve-logs"],
    ["dag-processor"],
    ["triggerer", "--skip-serve-logs"],
    ["api-server"],
)


def standalone(conf: Settings, env: dict[str, str]) -> int:
    """Run Airflow's components until one exits or we are stopped; then stop them all."""
    ensure_database(conf, env)
    children = [subprocess.Popen([str(AIRFLOW_BIN / "airflow"), *c], env=env) for c in COMPONENTS]
    passwords = airflow_home(conf) / "simple_auth_manager_passwords.json.generated"
    print(
        f"airflow: UI on http://{env['AIRFLOW__API__HOST']}:{env['AIRFLOW__API__PORT']} "
        f"(user admin, password in {passwords}); Ctrl-C stops it",
        file=sys.stderr,
    )
    # A SIGTERM (e.g. `kill <pid>`) stops the children as Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        pid, status = os.wait()
        code = os.waitstatus_to_exitcode(status)
        print(f"airflow: component pid {pid} exited with {code}; stopping", file=sys.stderr)
    except KeyboardInterrupt:
        code = 0
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
    return code


def main(argv: list[str]) -> None:
    conf = settings()
    if not (AIRFLOW_BIN / "airflow").exists():
        sys.exit("airflow: no .venv-airflow; run `make setup`")
    airflow_home(conf).mkdir(parents=True, exist_ok=True)
    env = airflow_env(conf)
    ensure_manifest(conf)
    if argv[:1] == ["standalone"]:
        sys.exit(standalone(conf, env))
    if argv[:1] == ["python"]:
        program, args = AIRFLOW_BIN / "python", argv[1:]
    else:
        program, args = AIRFLOW_BIN / "airflow", argv
        if argv[:1] not in (["db"], ["version"]):
            ensure_database(conf, env)
    os.execve(program, [str(program), *args], env)


if __name__ == "__main__":
    main(sys.argv[1:])
