"""The project's settings: `conf/lakehouse.yml`, overridden by `LAKEHOUSE_*` variables.

One file plus the environment, so that a laptop and a cluster run the same code
and differ only in configuration (see docs/contracts.md and the README).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ingestion.errors import UserError

PROJECT_DIR = Path(os.environ.get("LAKEHOUSE_PROJECT_DIR", Path(__file__).resolve().parents[1]))
SETTINGS_FILE = PROJECT_DIR / "conf" / "lakehouse.yml"
# Databases and schemas reach SQL: plain identifiers only.
LOOPBACK = "127.0.0.1"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class SettingsError(UserError):
    """A setting is missing or has the wrong type; the message names it."""


@dataclass(frozen=True)
class Settings:
    """Typed view of conf/lakehouse.yml after environment overrides."""

    home: Path
    jars: Path
    landing: str
    lake: str
    bronze_database: str
    spark_master: str
    bind_host: str
    hudi_conf_dir: Path
    driver_memory: str
    executor_memory: str
    job_java_options: str
    quick_jit_max_mb: int
    shuffle_partitions: int
    parallel_tables: int
    lock_wait_seconds: int
    ingest_poll_seconds: float
    ingest_min_sync_seconds: float
    ingest_health_file: Path
    ingest_discover_seconds: float
    status_behind_seconds: float
    record_index_min_mb: int
    changelog_cluster_commits: int
    stream_compaction_commits: int
    metastore_uri: str
    metastore_port: int
    thrift_host: str
    thrift_port: int
    thrift_driver_memory: str
    start_timeout: int
    thrift_handler_threads: int
    thrift_handler_idle_seconds: int
    thrift_idle_session_seconds: int
    thrift_idle_operation_seconds: int
    thrift_health_timeout_seconds: int
    metastore_pool_size: int
    metastore_wait_seconds: int
    ui_retained_history: int
    dbt_target_path: Path
    dbt_schema: str
    marts_schema: str
    docs_port: int
    dashboard_port: int
    freshness_warn_hours: float
    jobs_file: Path
    notify_command: str
    notify_url: str
    kafka_bootstrap_servers: str
    kafka_options: dict[str, str]
    source_kinds: dict[str, str]
    source_kafka_formats: dict[str, str]
    schema_registry_url: str
    cdc_jars: Path
    cdc_heap: str
    cdc_postgres_port: int
    cdc_mariadb_port: int
    cdc_kafka_port: int
    cdc_kafka_controller_port: int
    cdc_connect_port: int
    cdc_registry_port: int
    unavailable_value_placeholder: str
    spark_conf: dict[str, str] = field(default_factory=dict)

    @property
    def jars_dir(self) -> Path:
        """Jars fetched by `make setup` from Maven Central (jvm/pom.xml)."""
        return self.jars

    @property
    def jvm_archive(self) -> Path:
        """The Spark driver's class-data-sharing archive, made by `make setup` (jvm_archive.py)."""
        return self.jars / "spark-driver.jsa"

    @property
    def run_dir(self) -> Path:
        """Pid files and logs of the local stack."""
        return self.home / "run"

    @property
    def kafka_servers(self) -> str:
        """Kafka's bootstrap servers: the configured ones, or the local chain's broker."""
        return self.kafka_bootstrap_servers or f"{LOOPBACK}:{self.cdc_kafka_port}"

    @property
    def registry_url(self) -> str:
        """Apicurio Registry's v2 API: the configured one, or the local chain's registry."""
        url = self.schema_registry_url or f"http://{LOOPBACK}:{self.cdc_registry_port}"
        return url.rstrip("/").removesuffix("/apis/registry/v2") + "/apis/registry/v2"

    @property
    def warehouse_dir(self) -> Path:
        """Default location of managed tables in the local catalog."""
        return self.home / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        """Derby system home of the local catalog."""
        return self.home / "metastore"

    @property
    def local_metastore(self) -> bool:
        """True when the stack starts its own catalog (no metastore URI configured)."""
        return not self.metastore_uri

    @property
    def metastore_jdbc_url(self) -> str:
        """JDBC URL of the local catalog's database, served by Derby on loopback."""
        return f"jdbc:derby://{self.thrift_host}:{self.metastore_port}/metastore_db;create=true"


def _resolve_path(value: str) -> str:
    """Make a relative local path absolute from the repository root; leave URIs alone."""
    if "://" in value:
        return value
    path = Path(value)
    return str(path if path.is_absolute() else PROJECT_DIR / path)


def _coerce(name: str, value: Any, kind: Any) -> Any:
    try:
        if kind in (int, "int"):
            return int(value)
        if kind in (float, "float"):
            return float(value)
        if kind in (dict[str, str], "dict[str, str]"):
            parsed = json.loads(value) if isinstance(value, str) else (value or {})
            if not isinstance(parsed, dict):
                raise TypeError("expected a mapping")
            return {str(k): str(v) for k, v in parsed.items()}
        if kind in (Path, "Path"):
            return Path(_resolve_path(str(value)))
        return str(value)
    except (TypeError, ValueError) as error:
        raise SettingsError(f"{SETTINGS_FILE}: setting '{name}' is invalid: {error}") from error


def load_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """Read the settings file, then apply LAKEHOUSE_<NAME> variables and explicit overrides."""
    raw = yaml.safe_load(SETTINGS_FILE.read_text()) or {}
    values: dict[str, Any] = {}
    for spec in fields(Settings):
        env = os.environ.get(f"LAKEHOUSE_{spec.name.upper()}")
        value = (overrides or {}).get(spec.name, env if env is not None else raw.get(spec.name))
        if value is None:
            if spec.name in ("spark_conf", "kafka_options", "source_kinds", "source_kafka_formats"):
                value = {}
            else:
                raise SettingsError(f"{SETTINGS_FILE}: setting '{spec.name}' is missing")
        values[spec.name] = _coerce(spec.name, value, spec.type)
    if not IDENTIFIER.fullmatch(values["bronze_database"]):
        raise SettingsError(
            f"{SETTINGS_FILE}: setting 'bronze_database' is invalid: "
            f"{values['bronze_database']!r} is not a plain name (letters, digits, underscores)"
        )
    if not values["unavailable_value_placeholder"]:
        # Empty, it would take every empty string for a value Debezium could not read.
        raise SettingsError(
            f"{SETTINGS_FILE}: setting 'unavailable_value_placeholder' is empty: set it to "
            "the connector's unavailable.value.placeholder (__debezium_unavailable_value)"
        )
    values["landing"] = _resolve_path(values["landing"])
    values["lake"] = _resolve_path(values["lake"])
    return Settings(**values)


@cache
def settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()
