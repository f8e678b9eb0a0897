"""The live CDC chain: PostgreSQL (ems), MariaDB (ecomm), a KRaft Kafka broker, Kafka Connect.

With a source on Avro (`source_kafka_formats`), Apicurio Registry runs too,
before Connect, its schemas in a database of the chain's own PostgreSQL: a
record names its schema by id, so the ids must outlive a registry restart as
the topics do, and two connectors register their first schemas at once
(decision 0024).

`up` creates what is missing (database clusters, the broker's storage, the
worker's properties), starts each process with the local stack's helpers
(lakehouse/stack.py: pid files, health checks with a deadline, stop by pid),
creates the source databases and registers the Debezium connectors of
conf/cdc/ over Connect's REST API. `down` stops exactly those processes,
Connect first so no connector outlives its database. Everything binds
127.0.0.1; data, pid files and logs live under `home`.
"""

from __future__ import annotations

import base64
import json
import signal
import socket
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

from ingestion.config import load_document
from ingestion.settings import LOOPBACK, PROJECT_DIR, Settings, settings
from lakehouse import stack
from lakehouse.cdc import connectors, databases, markers
from lakehouse.stack import Service, StackError

CONF_DIR = PROJECT_DIR / "conf" / "cdc"
KAFKA_CLASS = "kafka.Kafka"
CONNECT_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"
STORAGE_CLASS = "kafka.tools.StorageTool"
# A smaller connection pool than its 20 (its own settings are the %prod ones).
REGISTRY_OPTIONS = [
    "-D%prod.quarkus.datasource.jdbc.initial-size=2",
    "-D%prod.quarkus.datasource.jdbc.min-size=2",
]


def cdc_home(conf: Settings) -> Path:
    return conf.home / "cdc"


def kafka_jars(conf: Settings) -> Path:
    """The broker's and worker's class path (jvm/cdc/pom.xml, profile kafka)."""
    return conf.cdc_jars / "kafka"


def registry_app(conf: Settings) -> Path:
    """Apicurio Registry's Quarkus runner, built by `make setup` (jvm/registry/pom.xml)."""
    return conf.cdc_jars.parent / "registry" / "quarkus-app" / "quarkus-run.jar"


def registry_wanted() -> bool:
    """A registry runs with the chain when a source's connector writes Avro."""
    return any(s.kafka_format == "avro" for s in load_document().sources.values())


def _registry_api(conf: Settings) -> str:
    """The chain's own registry (not `schema_registry_url`, which may name another)."""
    return f"http://{LOOPBACK}:{conf.cdc_registry_port}/apis/registry/v2"


def registry_health(conf: Settings) -> None:
    """The registry answers its system info with its name."""
    with urllib.request.urlopen(f"{_registry_api(conf)}/system/info", timeout=5) as response:
        info = json.load(response)
    if "name" not in info:
        raise StackError(f"unexpected answer from the schema registry: {info!r}")


def check_jars(conf: Settings) -> None:
    """The chain's jars are there: `make setup` fetched them (runs never download)."""
    for folder, pattern in [
        (kafka_jars(conf), "kafka_*.jar"),
        (conf.cdc_jars / "connect-plugins" / "debezium-postgres", "debezium-connector-*.jar"),
        (conf.cdc_jars / "connect-plugins" / "debezium-mariadb", "debezium-connector-*.jar"),
    ]:
        if not any(folder.glob(pattern)):
            raise StackError(
                f"no {pattern} in {folder}: run `make setup` to fetch them (jvm/cdc/pom.xml)"
            )
    if registry_wanted() and not registry_app(conf).exists():
        raise StackError(
            f"no {registry_app(conf)}: run `make setup` to build Apicurio Registry "
            "(jvm/registry/pom.xml)"
        )


def _java(conf: Settings, main_class: str, *args: str) -> list[str]:
    return [
        "java",
        f"-Xmx{conf.cdc_heap}",
        "-XX:+UseSerialGC",
        f"-Dlog4j2.configurationFile={CONF_DIR / 'log4j2.properties'}",
        "-cp",
        f"{kafka_jars(conf)}/*",
        main_class,
        *args,
    ]


def _properties(path: Path, values: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    return path


def broker_properties(conf: Settings) -> Path:
    """A single-node KRaft broker that is its own controller, on loopback."""
    home = cdc_home(conf) / "kafka"
    broker, controller = conf.cdc_kafka_port, conf.cdc_kafka_controller_port
    return _properties(
        home / "server.properties",
        {
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.voters": f"1@{LOOPBACK}:{controller}",
            "listeners": f"PLAINTEXT://{LOOPBACK}:{broker},CONTROLLER://{LOOPBACK}:{controller}",
            "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{broker}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": home / "data",
            "num.partitions": 1,
            "offsets.topic.replication.factor": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "group.initial.rebalance.delay.ms": 0,
            # Change topics are the source of record here: keep them.
            "log.retention.ms": -1,
        },
    )


def worker_properties(conf: Settings) -> Path:
    """A distributed Connect worker: JsonConverter with schemas, state in Kafka topics."""
    port = conf.cdc_connect_port
    converter = "org.apache.kafka.connect.json.JsonConverter"
    return _properties(
        cdc_home(conf) / "connect" / "worker.properties",
        {
            "bootstrap.servers": conf.kafka_servers,
            "group.id": "lakehouse-cdc",
            "key.converter": converter,
            "value.converter": converter,
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            "config.storage.topic": "lakehouse-cdc-configs",
            "offset.storage.topic": "lakehouse-cdc-offsets",
            "status.storage.topic": "lakehouse-cdc-status",
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
            "offset.flush.interval.ms": 1000,
            "listeners": f"http://{LOOPBACK}:{port}",
            "rest.advertised.host.name": LOOPBACK,
            "rest.advertised.port": port,
            "plugin.path": conf.cdc_jars / "connect-plugins",
        },
    )


def new_cluster_id() -> str:
    """A KRaft cluster id as Kafka's own `random-uuid` draws one: never starting with '-'.

    URL-safe base64 of 16 random bytes starts with '-' once in 64 draws, and
    the storage tool then reads the id as an option ("argument --cluster-id/-t:
    expected one argument"); Kafka's `Uuid.randomUuid` draws again, so does this.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


def format_broker_storage(conf: Settings, log: Callable[[str], None]) -> None:
    """Format the KRaft log folder once (a new cluster id); later starts reuse it."""
    properties = broker_properties(conf)
    if (cdc_home(conf) / "kafka" / "data" / "meta.properties").exists():
        return
    cluster_id = new_cluster_id()
    command = _java(conf, STORAGE_CLASS, "format", "-t", cluster_id, "-c", str(properties))
    databases.run_checked(command, "formatting the Kafka broker's storage")
    log(f"kafka: storage formatted (cluster {cluster_id})")


def _tcp(port: int) -> Callable[[], None]:
    def check() -> None:
        with socket.create_connection((LOOPBACK, port), timeout=2):
            pass

    return check


def registry_service(conf: Settings) -> Service:
    """Apicurio Registry on loopback, its schemas in the chain's PostgreSQL."""
    home = cdc_home(conf) / "registry"
    return Service(
        name="cdc-registry",
        marker=f"-Dlakehouse.home={home}",
        port=conf.cdc_registry_port,
        command=[
            "java",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            f"-Dlakehouse.home={home}",  # read by no one: the marker that tells it is ours
            f"-Dquarkus.http.host={LOOPBACK}",
            f"-Dquarkus.http.port={conf.cdc_registry_port}",
            *REGISTRY_OPTIONS,
            "-jar",
            str(registry_app(conf)),
        ],
        health=lambda: registry_health(conf),
        port_setting="LAKEHOUSE_CDC_REGISTRY_PORT",
        env={
            "REGISTRY_DATASOURCE_URL": (
                f"jdbc:postgresql://{LOOPBACK}:{conf.cdc_postgres_port}/"
                f"{databases.REGISTRY_DATABASE}"
            ),
            "REGISTRY_DATASOURCE_USERNAME": databases.PG_USER,
            "REGISTRY_DATASOURCE_PASSWORD": "",
        },
    )


def services(conf: Settings, every: bool = False) -> list[Service]:
    """The chain's processes, in start order; `every`: the registry even when unused."""
    kafka_home = cdc_home(conf) / "kafka"
    connect_home = cdc_home(conf) / "connect"
    registry = [registry_service(conf)] if every or registry_wanted() else []
    return [
        Service(
            name="cdc-postgres",
            marker=str(databases.postgres_data(conf)),
            port=conf.cdc_postgres_port,
            command=databases.postgres_command(conf),
            health=lambda: databases.postgres_health(conf),
            port_setting="LAKEHOUSE_CDC_POSTGRES_PORT",
            stop_signal=signal.SIGINT,
        ),
        Service(
            name="cdc-mariadb",
            marker=str(databases.mariadb_data(conf)),
            port=conf.cdc_mariadb_port,
            command=databases.mariadb_command(conf),
            health=lambda: databases.mariadb_health(conf),
            port_setting="LAKEHOUSE_CDC_MARIADB_PORT",
        ),
        Service(
            name="cdc-kafka",
            marker=str(kafka_home / "server.properties"),
            port=conf.cdc_kafka_port,
            command=_java(conf, KAFKA_CLASS, str(kafka_home / "server.properties")),
            health=_tcp(conf.cdc_kafka_port),
            port_setting="LAKEHOUSE_CDC_KAFKA_PORT",
        ),
        *registry,
        Service(
            name="cdc-connect",
            marker=str(connect_home / "worker.properties"),
            port=conf.cdc_connect_port,
            command=_java(conf, CONNECT_CLASS, str(connect_home / "worker.properties")),
            health=lambda: connectors.worker_health(conf),
            port_setting="LAKEHOUSE_CDC_CONNECT_PORT",
        ),
    ]


def prepare(conf: Settings, log: Callable[[str], None]) -> None:
    """What must exist before the processes start: jars, clusters, storage, worker config."""
    check_jars(conf)
    databases.init_postgres(conf, log)
    databases.init_mariadb(conf, log)
    format_broker_storage(conf, log)
    worker_properties(conf)


def up(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    """Start the chain, wait for each health check, then register the connectors and wait
    until each has published a marker (markers.wait_capturing)."""
    conf = conf or settings()
    prepare(conf, log)
    deadline = time.monotonic() + conf.start_timeout
    for service in services(conf):
        pid = stack.start(service, conf, log)
        stack.wait_healthy(service, conf, pid, deadline, log)
        log(f"{service.name}: healthy on {LOOPBACK}:{service.port}")
        if service.name == "cdc-mariadb":
            databases.create_source_databases(conf)
    for name in connectors.register_all(conf):
        log(f"connector {name}: registered")
    connectors.wait_running(conf, deadline, log)
    markers.wait_capturing(conf, deadline, log)
    log("connectors: running and capturing")


def start_service(name: str, conf: Settings, log: Callable[[str], None] = print) -> None:
    """Start one stopped process of the chain again (the fault tests restart them)."""
    service = next(s for s in services(conf) if s.name == name)
    pid = stack.start(service, conf, log)
    stack.wait_healthy(service, conf, pid, time.monotonic() + conf.start_timeout, log)


def down(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    """Stop what `up` started, in reverse order (Connect before the broker and databases)."""
    conf = conf or settings()
    wanted = {s.name for s in services(conf)}
    for service in reversed(services(conf, every=True)):
        stopped = stack.stop(service, conf)
        if stopped or service.name in wanted:  # a registry no source uses goes unmentioned
            log(f"{service.name}: {'stopped' if stopped else 'not running'}")


def status(conf: Settings | None = None, log: Callable[[str], None] = print) -> bool:
    """Each process and its health, then each connector's state; True if all are fine."""
    conf = conf or settings()
    healthy = stack.report(services(conf), conf, LOOPBACK, log)
    if healthy:
        for name, state in connectors.states(conf).items():
            log(f"connector {name}: {state}")
            healthy = healthy and state == "RUNNING"
    return healthy


def logs(conf: Settings | None = None, name: str | None = None, lines: int = 50) -> str:
    """The tail of each process's log, for `lakehouse cdc logs`."""
    conf = conf or settings()
    return "\n".join(
        s.log_tail(conf, lines)
        for s in services(conf)
        if name in (None, s.name, s.name.removeprefix("cdc-"))
    )
