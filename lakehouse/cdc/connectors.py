"""The Debezium connectors, registered on the Connect worker over its REST API.

Each connector's config is a file of conf/cdc/ (`*.connector.json`); the
ports and servers that differ per machine are `${setting}` placeholders
filled from the settings, and `${boolean_columns}` from conf/tables.yml (see
`boolean_selector`). Registering is a PUT of the config, so running `up`
again updates a connector instead of failing.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from string import Template
from typing import Any

from ingestion.config import Source, TableConfig, TableDocument, load_document
from ingestion.settings import LOOPBACK, PROJECT_DIR, Settings
from lakehouse.cdc.catalog import captured
from lakehouse.cdc.databases import MARKER_TABLE, SIGNAL_TABLE
from lakehouse.stack import StackError

CONNECTOR_FILES = PROJECT_DIR / "conf" / "cdc"
# A column selector no column matches: an empty one would make every TINYINT(1) a boolean.
NO_COLUMN = "(?!)"
# The chain's own tables, captured in every schema a connector includes.
CHAIN_TABLES = (MARKER_TABLE, SIGNAL_TABLE)


def _url(conf: Settings, path: str) -> str:
    return f"http://{LOOPBACK}:{conf.cdc_connect_port}{path}"


def _request(conf: Settings, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        _url(conf, path), data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if text else None


def worker_health(conf: Settings) -> None:
    """The worker answers its REST root with its version once it has joined its group."""
    info = _request(conf, "GET", "/")
    if "version" not in info:
        raise StackError(f"unexpected answer from Connect: {info!r}")
    _request(conf, "GET", "/connectors")


def boolean_selector(config: dict[str, str], tables: list[TableConfig]) -> str:
    """The `db.table.column` regexes of the `boolean` columns a binlog connector captures.

    MariaDB's BOOLEAN is TINYINT(1), and so is any other one-digit TINYINT:
    converting all of them would turn a 2 into `true`. The table config is the
    one place that says which columns are booleans; a connector's topics are
    `<topic.prefix>.<db>.<table>`, so a table is its `<db>.<table>` when its
    topic starts with the prefix and names a database the connector includes
    (any, without `database.include.list`).
    """
    prefix = config.get("topic.prefix", "") + "."
    databases = {d.strip() for d in config.get("database.include.list", "").split(",")} - {""}
    columns = [
        f"{table.topic.removeprefix(prefix)}.{column}"
        for table in tables
        if table.topic.startswith(prefix)
        and (not databases or table.topic.removeprefix(prefix).split(".")[0] in databases)
        for column, kind in table.columns.items()
        if kind.kind == "boolean"
    ]
    return ",".join(c.replace(".", "\\.") for c in columns) or NO_COLUMN


def table_include_list(source: Source, config: dict[str, str], document: TableDocument) -> str:
    """The `table.include.list` of the connector of a source with `include` patterns.

    The connector then captures what the lake serves: the tables the patterns
    select (an `exclude` as a negative lookahead, since Debezium takes no
    exclude list beside an include list), the source's listed tables, and the
    chain's own markers and signalling tables in each schema it includes.
    """
    prefix = config.get("topic.prefix", "")
    excluded = "|".join(p.pattern for p in source.exclude)
    guard = f"(?!(?:{excluded})$)" if excluded else ""
    entries = [f"{guard}(?:{p.pattern})" for p in source.include]
    entries += [
        re.escape(table.topic.removeprefix(prefix + "."))
        for table in document.tables.values()
        if table.source.name == source.name
    ]
    entries += [re.escape(f"{schema}.{own}") for schema in captured(config) for own in CHAIN_TABLES]
    # Debezium splits the list on commas; one inside a pattern is escaped.
    return ",".join(entry.replace(",", "\\,") for entry in entries)


AVRO_CONVERTER = "io.apicurio.registry.utils.converter.AvroConverter"


def avro_converters(conf: Settings) -> dict[str, str]:
    """Keys and values as Avro, their schemas registered in Apicurio Registry.

    Set on the connector, over the worker's JsonConverter, so that one source
    can write Avro while another writes JSON. Each new schema (a column added
    at the source) is registered as a new version under `<topic>-value`.
    """
    config = {}
    for part in ("key", "value"):
        config[f"{part}.converter"] = AVRO_CONVERTER
        config[f"{part}.converter.apicurio.registry.url"] = conf.registry_url
        config[f"{part}.converter.apicurio.registry.auto-register"] = "true"
    return config


def connector_configs(conf: Settings) -> dict[str, dict[str, str]]:
    """Each connector file's config, placeholders filled from the settings and tables.yml."""
    values = {
        "kafka_bootstrap_servers": conf.kafka_servers,
        "cdc_postgres_port": conf.cdc_postgres_port,
        "cdc_mariadb_port": conf.cdc_mariadb_port,
    }
    document = load_document()
    tables = list(document.tables.values())
    configs = {}
    for path in sorted(CONNECTOR_FILES.glob("*.connector.json")):
        file = json.loads(path.read_text())
        config = {k: str(v) for k, v in file["config"].items()}
        filled = values | {"boolean_columns": boolean_selector(config, tables)}
        config = {k: Template(v).substitute(filled) for k, v in config.items()}
        # A source's connector is conf/cdc/<source>-*.connector.json (table_entry.py too).
        source = document.sources.get(path.name.split("-", 1)[0])
        if source is not None and source.include:
            config["table.include.list"] = table_include_list(source, config, document)
        if source is not None and source.kafka_format == "avro":
            config |= avro_converters(conf)
        configs[file["name"]] = config
    return configs


def register(conf: Settings, name: str, config: dict[str, str]) -> None:
    """Create or update one connector (a PUT of its config)."""
    try:
        _request(conf, "PUT", f"/connectors/{name}/config", config)
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:300]
        raise StackError(f"connector {name} rejected by Connect: {detail}") from error


def registered_config(conf: Settings, name: str) -> dict[str, str]:
    """The config Connect runs a connector with (what was registered, not the file)."""
    return _request(conf, "GET", f"/connectors/{name}/config")


def remove(conf: Settings, name: str) -> None:
    """Delete one connector; its offsets and topics stay in Kafka."""
    _request(conf, "DELETE", f"/connectors/{name}")


def register_all(conf: Settings) -> list[str]:
    """Create or update every connector of conf/cdc/; return their names."""
    configs = connector_configs(conf)
    for name, config in configs.items():
        register(conf, name, config)
    return list(configs)


def states(conf: Settings) -> dict[str, str]:
    """Each connector's state and its tasks' (RUNNING only when all are)."""
    found = {}
    for name in connector_configs(conf):
        try:
            status = _request(conf, "GET", f"/connectors/{name}/status")
        except urllib.error.HTTPError:
            found[name] = "NOT REGISTERED"
            continue
        tasks = status.get("tasks", [])
        task_states = {task["state"] for task in tasks}
        state = status["connector"]["state"]
        if state == "RUNNING" and (not tasks or task_states != {"RUNNING"}):
            state = "TASKS " + ",".join(sorted(task_states) or ["NOT STARTED"])
        found[name] = state
    return found


def task_trace(conf: Settings, name: str) -> str:
    """The first line of a failed task's trace, for the error message.

    Debezium puts the connector's whole config (a password included, where
    one is set) into some messages: that part is left out.
    """
    status = _request(conf, "GET", f"/connectors/{name}/status")
    for task in status.get("tasks", []):
        if task.get("trace"):
            first = task["trace"].splitlines()[0]
            return re.sub(r"config=\{.*", "config={...}", first)[:300]
    return ""


# Restarts of failed tasks one wait may make before it gives up with the trace,
# and the seconds a restarted task is given before its state counts again.
MAX_RESTARTS = 3
RESTART_GRACE = 10.0


class Restarter:
    """Restarts failed tasks during one wait, at most MAX_RESTARTS times, then fails.

    Connect never restarts a failed task by itself, and Debezium's MariaDB 3.2
    task (the newest Maven Central serves whole) can die when the worker
    restarts it after a broker restart: `DebeziumOpenLineageEmitter not
    initialized`, a race with the old task's shutdown that later Debezium
    versions fixed (DBZ-9524). Its offsets are in Kafka, so a restart resumes
    where it stopped.
    """

    def __init__(self, conf: Settings, log: Callable[[str], None]) -> None:
        self.conf, self.log, self.restarts = conf, log, 0
        self.quiet_until = 0.0

    def check(self, current: dict[str, str]) -> None:
        """Restart the failed ones among `current` (states(): name -> state)."""
        names = [name for name, state in current.items() if "FAILED" in state]
        if not names or time.monotonic() < self.quiet_until:
            return
        if self.restarts >= MAX_RESTARTS:
            raise StackError(
                f"connector {names[0]} failed again after {MAX_RESTARTS} restarts: "
                f"{task_trace(self.conf, names[0])}; see `lakehouse cdc logs --service connect`"
            )
        self.restarts += 1
        self.quiet_until = time.monotonic() + RESTART_GRACE
        for name in names:
            trace = task_trace(self.conf, name)
            self.log(f"connector {name}: task failed ({trace}); restarting it")
            path = f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true"
            _request(self.conf, "POST", path)


def wait_running(conf: Settings, deadline: float, log: Callable[[str], None] = print) -> None:
    """Poll until every connector and task runs; a failed task is restarted (Restarter)."""
    current: dict[str, str] = {}
    restarter = Restarter(conf, log)
    while time.monotonic() < deadline:
        current = states(conf)
        restarter.check(current)
        if all(state == "RUNNING" for state in current.values()):
            return
        time.sleep(0.5)
    raise StackError(f"connectors not running in time: {current}")
