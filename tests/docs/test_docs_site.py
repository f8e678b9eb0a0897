"""The documentation site, served by `lakehouse docs serve`, in headless Chromium.

The checks read what a person sees: the lineage graph's nodes (from the
cytoscape instance the page draws) and a mart's page with its descriptions.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import pytest

from ingestion.settings import settings
from lakehouse.services import docs_site

from ..conftest import SCREENSHOTS

PROJECT = "tickit_lakehouse"
LOAD_MS = 60_000

# The nodes of the graph the page draws (cytoscape registers itself on its container).
GRAPH_NODES = """() => {
    const holder = [...document.querySelectorAll('div')].find(d => d._cyreg && d._cyreg.cy);
    return holder ? holder._cyreg.cy.nodes().map(n => n.data('label') || n.id()) : [];
}"""


@pytest.fixture(scope="module")
def site(daily_job) -> Iterator[str]:
    """The daily job's docs site, served on 127.0.0.1 and stopped afterwards."""
    conf = settings()
    address = docs_site.serve(conf, log=lambda _: None)
    yield address
    docs_site.stop(conf, log=lambda _: None)
    assert docs_site.stack.running_pid(docs_site.service(conf), conf) is None


def test_docs_serve_binds_loopback_and_serves_the_manifest(site) -> None:
    assert site.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(site + "manifest.json", timeout=10) as response:
        manifest = json.load(response)
    assert f"model.{PROJECT}.fct_sales" in manifest["nodes"]


def test_lineage_graph_runs_from_bronze_sources_to_the_exposures(site, browser) -> None:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(f"{site}#!/overview?g_v=1", timeout=LOAD_MS)
    page.wait_for_function(f"({GRAPH_NODES})().length > 20", timeout=LOAD_MS)
    nodes = set(page.evaluate(GRAPH_NODES))
    page.screenshot(path=str(SCREENSHOTS / "docs-lineage.png"))
    page.close()
    assert {"tickit.sales", "stg_tickit__sales", "fct_sales"} <= nodes, sorted(nodes)
    assert any(n.startswith("int_") for n in nodes)
    manifest = json.loads((settings().dbt_target_path / "manifest.json").read_text())
    exposures = {e.get("label") or e["name"] for e in manifest["exposures"].values()}
    assert exposures and exposures <= nodes, sorted(nodes)


def test_a_mart_page_renders_its_description_and_columns(site, browser) -> None:
    manifest = json.loads((settings().dbt_target_path / "manifest.json").read_text())
    fct_sales = manifest["nodes"][f"model.{PROJECT}.fct_sales"]
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{site}#!/model/model.{PROJECT}.fct_sales", timeout=LOAD_MS)
    first_sentence = fct_sales["description"].split(".")[0].strip()
    page.get_by_text(first_sentence, exact=False).first.wait_for(timeout=LOAD_MS)
    text = page.inner_text("body")
    page.screenshot(path=str(SCREENSHOTS / "docs-fct_sales.png"), full_page=True)
    page.close()
    assert "fct_sales" in text
    for column in ("sale_id", "price_paid", "category_name"):
        assert column in text
    assert fct_sales["columns"]["price_paid"]["description"].split(".")[0] in text
