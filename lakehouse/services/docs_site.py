"""The documentation site: `lakehouse docs build|serve|stop`.

`dbt docs generate` writes the site into dbt's target folder; `dbt docs serve`
runs in the background as one more loopback service of the stack, started and
stopped by its pid file like the Thrift server.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

from ingestion.errors import UserError
from ingestion.settings import PROJECT_DIR, Settings, settings
from lakehouse import stack
from lakehouse.dbt_wrapper import dbt_env, dbt_executable, run_dbt


def url(conf: Settings) -> str:
    return f"http://{stack.LOOPBACK}:{conf.docs_port}/"


def _http_health(address: str) -> Callable[[], None]:
    def check() -> None:
        with urllib.request.urlopen(address, timeout=2) as response:
            if response.status != 200:
                raise stack.StackError(f"{address} answered {response.status}")

    return check


def service(conf: Settings) -> stack.Service:
    """`dbt docs serve` as a stack service on 127.0.0.1."""
    return stack.Service(
        name="docs",
        marker="docs\0serve",
        port=conf.docs_port,
        command=[
            dbt_executable(),
            "docs",
            "serve",
            "--project-dir",
            str(PROJECT_DIR),
            "--host",
            stack.LOOPBACK,
            "--port",
            str(conf.docs_port),
            "--no-browser",
        ],
        health=_http_health(url(conf) + "manifest.json"),
        port_setting="LAKEHOUSE_DOCS_PORT",
        env=dbt_env(conf),
    )


def build(conf: Settings | None = None) -> None:
    """Generate the site (manifest, catalog, index.html) from the live catalog."""
    conf = conf or settings()
    if run_dbt(["docs", "generate"], conf).returncode != 0:
        raise UserError("dbt docs generate failed; see the output above")


def serve(conf: Settings | None = None, log: Callable[[str], None] = print) -> str:
    """Serve the generated site in the background; return its URL once it answers."""
    conf = conf or settings()
    if not (conf.dbt_target_path / "index.html").exists():
        raise UserError(
            f"no documentation site in {conf.dbt_target_path}: run `lakehouse docs build` first"
        )
    stack.start_healthy(service(conf), conf, log)
    log(f"docs: {url(conf)} (stop it with `lakehouse docs stop`)")
    return url(conf)


def stop(conf: Settings | None = None, log: Callable[[str], None] = print) -> None:
    conf = conf or settings()
    log(f"docs: {'stopped' if stack.stop(service(conf), conf) else 'not running'}")
