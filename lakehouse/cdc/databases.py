"""The chain's two source databases: PostgreSQL for ems, MariaDB for ecomm.

Each is a cluster of its own under `home`/cdc (never the system service),
listening on 127.0.0.1 only, set up for Debezium: PostgreSQL with
`wal_level=logical` (pgoutput), MariaDB with a row-based, full-image binlog
and a server id (its GTIDs are always on). PostgreSQL refuses to run as
root, so it runs as the `postgres` user and MariaDB as `mysql`, both from
the Debian packages. Local clusters trust loopback connections; production
points the connectors at RDS with credentials (docs/live-cdc.md).
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import psycopg
import pymysql

from ingestion.settings import LOOPBACK, Settings
from lakehouse.stack import StackError

PG_DATABASE = "tickit"  # ems lives in its schema `ems` (tickit.ems.<table> topics)
PG_SCHEMA = "ems"
PG_USER = "postgres"
# Apicurio Registry's schemas (lakehouse/cdc/chain.py); Debezium captures only tickit.
REGISTRY_DATABASE = "registry"
MARIADB_DATABASE = "ecomm"
# Debezium's signalling table, in the schema (PostgreSQL) or database (MariaDB) of
# the tables it signals for: the connectors' signal.data.collection. `lakehouse
# resnapshot` asks for an incremental snapshot with a row in it.
SIGNAL_TABLE = "debezium_signal"
# The publish markers' table in each source (markers.py).
MARKER_TABLE = "lakehouse_marker"
SIGNAL_COLUMNS = "(id varchar(64) primary key, type varchar(32) not null, data varchar(2048))"
MARIADB_USER = "lakehouse"  # loopback-only account of the local cluster, used by Debezium too


def run_checked(command: list[str], what: str) -> str:
    """Run a set-up command; a failure is a one-line error with the command's last words."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    except FileNotFoundError as error:
        raise StackError(f"{what}: {error.filename} not found; run `make setup`") from error
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise StackError(f"{what} failed: {' | '.join(last)}")
    return done.stdout


def _as_user(user: str, command: list[str]) -> list[str]:
    """`command` run as `user`; setpriv execs, so the pid stays the server's own."""
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *command]


def _owned_by(path: Path, user: str) -> None:
    """Create `path` for `user`, and let that user reach it through its parents."""
    path.mkdir(parents=True, exist_ok=True)
    entry = pwd.getpwnam(user)
    for folder in [path, *[p for p in path.rglob("*")]]:
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def postgres_bin() -> Path:
    """The newest PostgreSQL server binaries of the Debian packages."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: p.parts)
    if not found:
        raise StackError("PostgreSQL is not installed: run `make setup` (Debian `postgresql`)")
    return found[-1].parent


def postgres_data(conf: Settings) -> Path:
    return conf.home / "cdc" / "postgres"


def mariadb_data(conf: Settings) -> Path:
    return conf.home / "cdc" / "mariadb"


def init_postgres(conf: Settings, log: Callable[[str], None]) -> None:
    """initdb once, as `postgres`, trusting loopback connections only."""
    data = postgres_data(conf)
    if (data / "PG_VERSION").exists():
        return
    _owned_by(data, PG_USER)
    command = [str(postgres_bin() / "initdb"), "-D", str(data), "-U", PG_USER, "-E", "UTF8"]
    run_checked(_as_user(PG_USER, [*command, "--auth=trust"]), "initdb")
    # Only TCP on loopback: connections and replication from 127.0.0.1, nothing else.
    (data / "pg_hba.conf").write_text(
        f"host all {PG_USER} {LOOPBACK}/32 trust\nhost replication {PG_USER} {LOOPBACK}/32 trust\n"
    )
    log(f"cdc-postgres: cluster created in {data}")


def postgres_command(conf: Settings) -> list[str]:
    settings = {
        "listen_addresses": LOOPBACK,
        "port": conf.cdc_postgres_port,
        "unix_socket_directories": "",
        "wal_level": "logical",
        "max_wal_senders": 4,
        "max_replication_slots": 4,
        "shared_buffers": "64MB",
        "fsync": "on",
    }
    options = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
    server = str(postgres_bin() / "postgres")
    return _as_user(PG_USER, [server, "-D", str(postgres_data(conf)), *options])


def init_mariadb(conf: Settings, log: Callable[[str], None]) -> None:
    """mariadb-install-db once, as `mysql`, into the chain's own data folder."""
    data = mariadb_data(conf)
    if (data / "mysql").exists():
        return
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        raise StackError("MariaDB is not installed: run `make setup` (Debian `mariadb-server`)")
    _owned_by(data, "mysql")
    run_checked(
        [
            "mariadb-install-db",
            "--no-defaults",
            "--user=mysql",
            f"--datadir={data}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        "mariadb-install-db",
    )
    log(f"cdc-mariadb: data folder created in {data}")


def mariadb_socket(conf: Settings) -> Path:
    return mariadb_data(conf) / "mariadb.sock"


def mariadb_command(conf: Settings) -> list[str]:
    data = mariadb_data(conf)
    return [
        "/usr/sbin/mariadbd",
        "--no-defaults",
        f"--datadir={data}",
        "--user=mysql",
        f"--bind-address={LOOPBACK}",
        f"--port={conf.cdc_mariadb_port}",
        f"--socket={mariadb_socket(conf)}",
        f"--pid-file={data / 'mariadbd.pid'}",
        "--skip-name-resolve",
        # What Debezium's MariaDB connector reads: a row-based binlog with full images.
        "--log-bin=binlog",
        "--binlog-format=ROW",
        "--binlog-row-image=FULL",
        "--server-id=1",
        "--innodb-buffer-pool-size=64M",
        "--character-set-server=utf8mb4",
    ]


def postgres(conf: Settings, database: str = PG_DATABASE) -> psycopg.Connection:
    """A connection to the chain's PostgreSQL (autocommit off: callers commit)."""
    return psycopg.connect(
        host=LOOPBACK, port=conf.cdc_postgres_port, user=PG_USER, dbname=database, connect_timeout=5
    )


def mariadb(conf: Settings, database: str | None = MARIADB_DATABASE) -> pymysql.Connection:
    """A connection to the chain's MariaDB over TCP, as the loopback account."""
    return pymysql.connect(
        host=LOOPBACK,
        port=conf.cdc_mariadb_port,
        user=MARIADB_USER,
        database=database,
        connect_timeout=5,
        autocommit=False,
    )


def postgres_health(conf: Settings) -> None:
    with closing(postgres(conf, "postgres")) as connection:
        connection.execute("select 1").fetchone()


def mariadb_health(conf: Settings) -> None:
    """The root account over the socket (the loopback account may not exist yet)."""
    with closing(mariadb_root(conf)) as connection, connection.cursor() as cursor:
        cursor.execute("select 1")


def mariadb_root(conf: Settings) -> pymysql.Connection:
    return pymysql.connect(unix_socket=str(mariadb_socket(conf)), user="root", connect_timeout=5)


def create_source_databases(conf: Settings) -> None:
    """ecomm and the loopback account in MariaDB; tickit (schema ems) and registry in PG."""
    with closing(mariadb_root(conf)) as connection, connection.cursor() as cursor:
        cursor.execute(f"create database if not exists {MARIADB_DATABASE}")
        cursor.execute(f"create user if not exists '{MARIADB_USER}'@'{LOOPBACK}'")
        cursor.execute(f"grant all privileges on *.* to '{MARIADB_USER}'@'{LOOPBACK}'")
    with closing(postgres(conf, "postgres")) as connection:
        connection.autocommit = True
        for database in (PG_DATABASE, REGISTRY_DATABASE):
            exists = connection.execute(
                "select 1 from pg_database where datname = %s", (database,)
            ).fetchone()
            if not exists:
                connection.execute(f"create database {database}")
    with closing(postgres(conf)) as connection:
        connection.execute(f"create schema if not exists {PG_SCHEMA}")
        connection.execute(
            f"create table if not exists {PG_SCHEMA}.{SIGNAL_TABLE} {SIGNAL_COLUMNS}"
        )
        connection.commit()
    with closing(mariadb(conf)) as connection, connection.cursor() as cursor:
        cursor.execute(
            f"create table if not exists {MARIADB_DATABASE}.{SIGNAL_TABLE} {SIGNAL_COLUMNS}"
        )
        connection.commit()
