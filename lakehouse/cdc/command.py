"""`lakehouse cdc up | down | status | logs | load | workload | sql`: the live chain's commands."""

from __future__ import annotations

import argparse
import os
import shutil

from ingestion.errors import UserError
from ingestion.settings import LOOPBACK, Settings, settings
from lakehouse import output

SERVICES = ["postgres", "mariadb", "kafka", "connect"]


def _chain(args: argparse.Namespace) -> int:
    from lakehouse.cdc import chain

    if args.cdc_command == "up":
        chain.up(log=output.say)
        return 0
    if args.cdc_command == "down":
        chain.down(log=output.say)
        return 0
    if args.cdc_command == "status":
        return 0 if chain.status(log=output.say) else 1
    output.say(chain.logs(name=args.service, lines=args.lines))
    return 0


def _load(args: argparse.Namespace) -> int:
    from lakehouse.cdc.load import load

    load(args.scale, args.seed, log=output.say)
    return 0


def _workload(args: argparse.Namespace) -> int:
    from lakehouse.cdc.workload import WorkloadOptions, run_workload

    options = WorkloadOptions(
        rate=args.rate, minutes=args.minutes, transactions=args.transactions, seed=args.seed
    )
    run_workload(options, log=output.say)
    return 0


def sql_client(conf: Settings, database: str, statement: str | None) -> tuple[list[str], dict]:
    """The client command (psql, mariadb) on the chain's database, and its environment.

    PostgreSQL's search path starts at the ems schema, so unqualified names are
    the connector's; MariaDB talks utf8mb4, the server's character set.
    """
    from lakehouse.cdc import databases

    env = dict(os.environ)
    if database == "ems":
        command = ["psql", "-X", "-h", LOOPBACK, "-p", str(conf.cdc_postgres_port)]
        command += ["-U", databases.PG_USER, "-d", databases.PG_DATABASE, "-v", "ON_ERROR_STOP=1"]
        env["PGOPTIONS"] = f"-c search_path={databases.PG_SCHEMA},public"
        return command + (["-c", statement] if statement is not None else []), env
    command = ["mariadb", "--protocol=TCP", "-h", LOOPBACK, "-P", str(conf.cdc_mariadb_port)]
    command += ["-u", databases.MARIADB_USER, "--default-character-set=utf8mb4"]
    command += [databases.MARIADB_DATABASE]
    return command + (["-e", statement] if statement is not None else []), env


def _sql(args: argparse.Namespace) -> int:
    """Replace this process with the client, so that it owns the terminal (interactive)."""
    command, env = sql_client(settings(), args.database, args.statement)
    if shutil.which(command[0]) is None:
        raise UserError(f"{command[0]} not found: run `make setup` (its Debian client package)")
    os.execvpe(command[0], command, env)
    return 1  # not reached: exec replaced the process


def add_commands(cdc: argparse._SubParsersAction) -> None:
    """The live chain's subcommands, next to `cdc generate` and `cdc decode`."""
    helps = {
        "up": "start PostgreSQL, MariaDB, Kafka and Kafka Connect with the Debezium connectors",
        "down": "stop every process `cdc up` started",
        "status": "each process's health and each connector's state",
        "logs": "the tail of the chain's logs",
    }
    for action, text in helps.items():
        parser = cdc.add_parser(action, help=text)
        if action == "logs":
            parser.add_argument("--service", choices=SERVICES, help="logs of one process")
            parser.add_argument("-n", "--lines", type=int, default=50, help="log lines to show")
        parser.set_defaults(handler=_chain)
    load = cdc.add_parser("load", help="create the TICKIT tables of ems and ecomm and load them")
    load.add_argument("--scale", type=float, default=0.01, help="TICKIT scale (1 = TICKIT's size)")
    load.add_argument("--seed", type=int, default=42, help="seed of the generated rows")
    load.set_defaults(handler=_load)
    workload = cdc.add_parser("workload", help="run TICKIT transactions by SQL in both databases")
    amount = workload.add_mutually_exclusive_group(required=True)
    amount.add_argument("--minutes", type=float, help="run this long, at --rate")
    amount.add_argument("--transactions", type=int, help="run this many transactions")
    workload.add_argument("--rate", type=float, default=5.0, help="transactions per second")
    workload.add_argument("--seed", type=int, default=7, help="seed of the workload's choices")
    workload.set_defaults(handler=_workload)
    sql = cdc.add_parser(
        "sql", help="a SQL shell on the chain's database: ems (psql) or ecomm (mariadb)"
    )
    sql.add_argument("database", choices=["ems", "ecomm"], help="ems: PostgreSQL, ecomm: MariaDB")
    sql.add_argument(
        "-c", "-e", "--command", dest="statement", help="run this SQL and exit (not interactive)"
    )
    sql.set_defaults(handler=_sql)
