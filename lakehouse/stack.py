"""The local stack: the catalog's database and the Spark Thrift Server.

`up` starts what is not running yet and waits on a real health query; `down`
stops exactly the processes `up` started, found by their pid files. Both bind
to loopback only.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from ingestion.errors import UserError
from ingestion.settings import PROJECT_DIR, Settings, settings
from ingestion.spark import driver_java_options, spark_conf, spark_env
from lakehouse import thrift_client

# Where the project's own web servers (docs, dashboard) listen, whatever the Thrift host.
LOOPBACK = "127.0.0.1"
THRIFT_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
DERBY_CLASS = "org.apache.derby.drda.NetworkServerControl"
# How the Thrift server runs statements. Every metastore call needs its
# thread's metastore store (a Hive configuration parsed from XML and a
# DataNucleus store over the catalog's database), and two defaults kept
# throwing those away: impersonating each session's user made concurrent
# statements close and reopen the store around nearly every call (dbt's two
# threads: about 10 stores per statement), and Hive's pool (100 threads,
# stopped after 10 s idle) started a new thread, so a new store, for nearly
# every statement. Nothing is impersonated on a loopback stack without
# authentication; a few long-lived threads are reused and statements beyond
# them wait in the pool's queue.
STATEMENT_THREADS = 8
STATEMENT_THREAD_IDLE_SECONDS = 24 * 3600
# How often the server looks for idle sessions and operations to close, at most
# (more often when one of their idle times is shorter; Hive's least is 3 s).
SESSION_CHECK_SECONDS = 60
# A wedged server does not act on SIGTERM in time: SIGKILL after this many seconds.
WEDGED_STOP_SECONDS = 15


class StackError(UserError):
    """The stack cannot start or is unhealthy; the message says why and what to do."""


class Wedged(StackError):
    """The Thrift server holds its port but does not answer `select 1` in time."""


@dataclass(frozen=True)
class Service:
    """One process of the stack: how to start it and how to know it is healthy."""

    name: str
    marker: str  # a string in the process's command line, to never signal a stranger
    port: int
    command: list[str]
    health: Callable[[], None]
    port_setting: str  # the setting to change when the port is taken
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    # PostgreSQL's TERM is a "smart" shutdown that waits for every client; INT is "fast".
    stop_signal: int = signal.SIGTERM
    # The process writes its log itself (a rolling file, log_file); what it prints
    # (a JVM that cannot start, a crash) goes to output_file.
    own_log: bool = False

    def pid_file(self, conf: Settings) -> Path:
        return conf.run_dir / f"{self.name}.pid"

    def log_file(self, conf: Settings) -> Path:
        return conf.run_dir / f"{self.name}.log"

    def output_file(self, conf: Settings) -> Path:
        """Where the process's stdout and stderr go."""
        return conf.run_dir / f"{self.name}.out" if self.own_log else self.log_file(conf)

    def log_tail(self, conf: Settings, lines: int) -> str:
        """The last lines of what it printed, then of its log (one file unless own_log)."""
        files = dict.fromkeys([self.output_file(conf), self.log_file(conf)])
        return "\n".join(f"==> {f} <==\n{tail(f, lines)}" for f in files)


def spark_home() -> Path:
    """The Spark distribution inside the pyspark wheel (bin/, jars/)."""
    return Path(pyspark.__file__).parent


def _derby_command(conf: Settings) -> list[str]:
    classpath = os.pathsep.join(
        [str(spark_home() / "jars" / "derby-10.14.2.0.jar")]
        + [str(jar) for jar in sorted(conf.jars_dir.glob("derby*.jar"))]
    )
    return [
        "java",
        "-Xmx512m",
        f"-Dderby.system.home={conf.metastore_dir}",
        "-cp",
        classpath,
        DERBY_CLASS,
        "start",
        "-h",
        conf.thrift_host,
        "-p",
        str(conf.metastore_port),
        "-noSecurityManager",
    ]


def _thrift_command(conf: Settings) -> list[str]:
    values = spark_conf(conf)
    # A long-running server: the jobs' own JVM options are not for it (unless set in spark_conf).
    if "spark.driver.extraJavaOptions" not in conf.spark_conf:
        values["spark.driver.extraJavaOptions"] = driver_java_options(conf, job=False)
    command = [
        str(spark_home() / "bin" / "spark-submit"),
        "--class",
        THRIFT_CLASS,
        "--name",
        "lakehouse-thrift-server",
        "--driver-memory",
        conf.thrift_driver_memory,
    ]
    # spark_conf may still override them
    values = {**metastore_pool_conf(conf), **server_time_conf(conf), **values}
    for key, value in values.items():
        if key != "spark.driver.memory":
            command += ["--conf", f"{key}={value}"]
    command += [
        "--hiveconf",
        f"hive.server2.thrift.bind.host={conf.thrift_host}",
        "--hiveconf",
        f"hive.server2.thrift.port={conf.thrift_port}",
        "--hiveconf",
        "hive.server2.transport.mode=binary",
        "--hiveconf",
        "hive.server2.authentication=NONE",
        "--hiveconf",
        "hive.server2.enable.doAs=false",
        "--hiveconf",
        f"hive.server2.async.exec.threads={STATEMENT_THREADS}",
        "--hiveconf",
        f"hive.server2.thrift.min.worker.threads={conf.thrift_handler_threads}",
    ]
    # spark-submit wants a primary resource; the Thrift server's class is in the wheel's jars.
    command.append("spark-internal")
    return command


def server_time_conf(conf: Settings) -> dict[str, str]:
    """How long the Thrift server's threads, sessions and operations live, as Spark settings.

    Every connection is served by one handler thread (`thrift_handler_threads`
    of them are kept, a --hiveconf), and every thread that touches the
    metastore opens a store of its own: threads kept alive reuse their stores
    (docs/decisions/0014-thrift-server-stays-up.md). Sessions and finished
    operations a client abandons are closed after their idle time, not after
    Hive's 7 and 5 days. These are time settings, which Spark writes into the
    server's Hive configuration from the Hadoop configuration, defaults
    included, after `--hiveconf` has been read: a `--hiveconf` time setting
    is overwritten by Hive's default, so they go as `spark.hadoop.` settings
    (docs/decisions/0016-thrift-operations-closed.md).
    """
    idle = min(conf.thrift_idle_session_seconds, conf.thrift_idle_operation_seconds)
    check_seconds = max(3, min(SESSION_CHECK_SECONDS, idle))
    bounds = {
        "hive.server2.thrift.worker.keepalive.time": f"{conf.thrift_handler_idle_seconds}s",
        "hive.server2.async.exec.keepalive.time": f"{STATEMENT_THREAD_IDLE_SECONDS}s",
        "hive.server2.idle.session.timeout": f"{conf.thrift_idle_session_seconds}s",
        "hive.server2.idle.operation.timeout": f"{conf.thrift_idle_operation_seconds}s",
        "hive.server2.session.check.interval": f"{check_seconds}s",
    }
    return {f"spark.hadoop.{key}": value for key, value in bounds.items()}


def metastore_pool_conf(conf: Settings) -> dict[str, str]:
    """The embedded metastore's connection pool: HikariCP, sized, with a wait deadline.

    BoneCP (Hive's default) waits for a free connection forever, and the
    waiting call holds Spark's catalog lock, so every other session blocks
    behind it: the server stops serving but holds its port. HikariCP (in
    Spark's jars) fails the call after `metastore_wait_seconds` instead, and
    logs the stack of whoever kept a connection past that time.
    """
    if conf.metastore_uri:
        return {}  # a remote metastore pools its own connections
    wait_ms = str(conf.metastore_wait_seconds * 1000)
    return {
        "spark.hadoop.datanucleus.connectionPoolingType": "HikariCP",
        "spark.hadoop.datanucleus.connectionPool.maxPoolSize": str(conf.metastore_pool_size),
        "spark.hadoop.datanucleus.connectionPool.connectionWaitTimeout": wait_ms,
        "spark.hadoop.datanucleus.connectionPool.leakThreshold": wait_ms,
    }


def _tcp_health(host: str, port: int) -> Callable[[], None]:
    def check() -> None:
        with socket.create_connection((host, port), timeout=2):
            pass

    return check


def query(sql: str, conf: Settings | None = None) -> list[tuple]:
    """Run one statement through the Thrift server (lakehouse.thrift_client) and fetch the rows."""
    return thrift_client.execute(sql, conf).rows


def services(conf: Settings) -> list[Service]:
    """The stack's processes, in start order."""
    started: list[Service] = []
    if conf.local_metastore:
        started.append(
            Service(
                name="catalog",
                marker=DERBY_CLASS,
                port=conf.metastore_port,
                command=_derby_command(conf),
                health=_tcp_health(conf.thrift_host, conf.metastore_port),
                port_setting="LAKEHOUSE_METASTORE_PORT",
            )
        )
    started.append(
        Service(
            name="thrift",
            marker=THRIFT_CLASS,
            port=conf.thrift_port,
            command=_thrift_command(conf),
            health=lambda: _thrift_health(conf),
            port_setting="LAKEHOUSE_THRIFT_PORT",
            env={**spark_env(conf), "SPARK_SUBMIT_OPTS": _server_log_options(conf, "thrift")},
            own_log=True,
        )
    )
    return started


SERVER_LOG_CONFIG = PROJECT_DIR / "conf" / "log4j2-server.properties"


def _server_log_options(conf: Settings, name: str) -> str:
    """A long-running JVM's log in a bounded, rolling file (conf/log4j2-server.properties).

    Through SPARK_SUBMIT_OPTS, the driver JVM's options in client mode, so
    that a spark_conf setting its own extraJavaOptions keeps them.
    """
    log_file = conf.run_dir / f"{name}.log"
    return f"-Dlog4j2.configurationFile={SERVER_LOG_CONFIG} -Dlakehouse.log.file={log_file}"


def _thrift_health(conf: Settings) -> None:
    """Serving: a new session answers `select 1` within `thrift_health_timeout_seconds`."""
    _tcp_health(conf.thrift_host, conf.thrift_port)()  # fail fast before PyHive's retries
    seconds = conf.thrift_health_timeout_seconds
    try:
        with thrift_client.Connection(conf, timeout=seconds) as connection:
            rows = connection.execute("select 1").rows
    except thrift_client.NoAnswer:
        pid = thrift_pid(conf)
        raise Wedged(
            f"wedged (pid {pid}): no answer to select 1 in {seconds} s; "
            "run lakehouse stack up to replace it"
        ) from None
    if rows != [(1,)]:
        raise StackError(f"health query returned {rows!r}")


def thrift_service(conf: Settings) -> Service:
    """The Thrift server among the stack's processes (its pid file, log, port)."""
    return next(s for s in services(conf) if s.name == "thrift")


def thrift_pid(conf: Settings) -> int | None:
    """The Thrift server's pid (its JVM) when it is up and ours, else None."""
    return running_pid(thrift_service(conf), conf)


def running_pid(service: Service, conf: Settings) -> int | None:
    """The pid from the pid file if that process is alive and is ours (its command line)."""
    pid_file = service.pid_file(conf)
    if not pid_file.exists():
        return None
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (ValueError, OSError):
        return None
    return pid if service.marker in cmdline else None


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def _listened_on(port: int) -> bool:
    """True when some socket listens on the port, from the kernel's TCP tables."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, _, state = row.split()[1:4]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False


# A server stopped while a client kept a connection open (a browser on the docs
# site) leaves that connection closing for up to the kernel's FIN timeout (60 s),
# and a server that binds without SO_REUSEADDR (`dbt docs serve`) cannot bind
# meanwhile: a restart waits for it, though never for a port something listens on.
RELEASE_SECONDS = 90


def port_released(host: str, port: int) -> bool:
    """Poll until the port can be bound; False at once when a socket listens on it."""
    deadline = time.monotonic() + RELEASE_SECONDS
    while port_in_use(host, port):
        if _listened_on(port) or time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def wait_healthy(
    service: Service, conf: Settings, pid: int, deadline: float, log: Callable[[str], None]
) -> None:
    """Poll the health check until it passes, the process dies, or the deadline passes."""
    last_error: Exception | None = None
    next_report = time.monotonic() + 15
    while time.monotonic() < deadline:
        if _is_zombie(pid):
            raise StackError(
                f"{service.name} exited during start-up:\n" + service.log_tail(conf, 20)
            )
        try:
            service.health()
            return
        except Exception as error:  # any failure means "not yet"
            last_error = error
        if time.monotonic() >= next_report:
            log(f"  waiting for {service.name} on port {service.port} ...")
            next_report = time.monotonic() + 15
        time.sleep(0.5)
    raise StackError(
        f"{service.name} not healthy after {conf.start_timeout}s ({last_error}); "
        f"see {service.log_file(conf)}"
    )


def start(service: Service, conf: Settings, log: Callable[[str], None]) -> int:
    """Start one service unless it already runs and serves; return its pid.

    A running service that is wedged (holds its port, answers nothing) is
    stopped by its pid and started anew.
    """
    pid = running_pid(service, conf)
    if pid is not None and not _replaced_if_wedged(service, conf, pid, log):
        log(f"{service.name}: already running (pid {pid})")
        return pid
    if not port_released(conf.thrift_host, service.port):
        raise StackError(
            f"{service.name}: port {service.port} on {conf.thrift_host} is already in use by "
            f"another process; stop it or choose another port ({service.port_setting})"
        )
    conf.run_dir.mkdir(parents=True, exist_ok=True)
    conf.metastore_dir.mkdir(parents=True, exist_ok=True)
    with service.output_file(conf).open("ab") as log_file:
        process = subprocess.Popen(
            service.command,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=conf.run_dir,
            start_new_session=True,
            env={
                **os.environ,
                "SPARK_HOME": str(spark_home()),
                "PYSPARK_PYTHON": sys.executable,
                **service.env,
            },
        )
    service.pid_file(conf).write_text(str(process.pid))
    log(f"{service.name}: starting (pid {process.pid}), log {service.log_file(conf)}")
    return process.pid


def _replaced_if_wedged(
    service: Service, conf: Settings, pid: int, log: Callable[[str], None]
) -> bool:
    """Stop a running service that is wedged (TERM, then KILL); True if it was."""
    try:
        service.health()
    except Wedged as error:
        log(f"{service.name}: {error}: replacing it")
        stop(service, conf, timeout=WEDGED_STOP_SECONDS)
        # A killed JVM's main thread exits first; its port closes with its last thread.
        deadline = time.monotonic() + 10
        while _listened_on(service.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        return True
    except Exception:  # starting up, or failing otherwise: not ours to replace
        return False
    return False


def start_healthy(service: Service, conf: Settings, log: Callable[[str], None]) -> int:
    """Start one service and wait for its health check; stop it again if it never gets there."""
    pid = start(service, conf, log)
    try:
        wait_healthy(service, conf, pid, time.monotonic() + conf.start_timeout, log)
    except StackError:
        stop(service, conf, timeout=10)
        raise
    return pid


def up(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    """Start the catalog and the Thrift server, then wait until each answers its health check."""
    conf = conf or settings()
    deadline = time.monotonic() + conf.start_timeout
    for service in services(conf):
        pid = start(service, conf, log)
        wait_healthy(service, conf, pid, deadline, log)
        log(f"{service.name}: healthy on {conf.thrift_host}:{service.port}")


def stop(service: Service, conf: Settings, timeout: float = 60) -> bool:
    """Stop one service by its pid (TERM, then KILL after the timeout); True if it ran."""
    pid = running_pid(service, conf)
    service.pid_file(conf).unlink(missing_ok=True)
    if pid is None:
        return False
    os.kill(pid, service.stop_signal)
    if not _exited_within(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        _exited_within(pid, 10)  # so that its port is free for a new one
    return True


def _exited_within(pid: int, seconds: float) -> bool:
    """Poll until the process has exited (gone or a zombie); False after the seconds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _is_zombie(pid):
            return True
        time.sleep(0.2)
    return False


def _is_zombie(pid: int) -> bool:
    """True when the process is gone or a zombie, i.e. it has exited."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def down(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    """Stop what `up` started, Thrift server first so it never loses its catalog mid-query."""
    conf = conf or settings()
    for service in reversed(services(conf)):
        stopped = stop(service, conf)
        log(f"{service.name}: {'stopped' if stopped else 'not running'}")


def status(conf: Settings | None = None, log: Callable[[str], None] = print) -> bool:
    """Report each service and run the health query; True only if all are healthy."""
    conf = conf or settings()
    return report(services(conf), conf, conf.thrift_host, log)


def report(running: list[Service], conf: Settings, host: str, log: Callable[[str], None]) -> bool:
    """Each service's process and health check, a line each; True only if all are healthy."""
    healthy = True
    for service in running:
        pid = running_pid(service, conf)
        if pid is None:
            log(f"{service.name}: down")
            healthy = False
            continue
        try:
            service.health()
            log(f"{service.name}: up (pid {pid}) on {host}:{service.port}")
        except Wedged as error:
            log(f"{service.name}: {error}")
            healthy = False
        except Exception as error:
            log(f"{service.name}: running (pid {pid}) but unhealthy: {error}")
            healthy = False
    return healthy


def tail(path: Path, lines: int) -> str:
    """The last lines of a log file (empty if there is none yet)."""
    if not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 256 * 1024))
        text = handle.read().decode(errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def logs(conf: Settings | None = None, name: str | None = None, lines: int = 50) -> str:
    """The tail of each service's log, for `lakehouse stack logs`."""
    conf = conf or settings()
    parts = []
    for service in services(conf):
        if name in (None, service.name):
            parts.append(service.log_tail(conf, lines))
    return "\n".join(parts)
