"""The dashboard in a real browser: every page draws its charts from the marts built by `daily`.

Streamlit is started with `lakehouse dashboard up`'s code on a free port,
against the session stack's Thrift server; headless Chromium loads each page,
waits (with a deadline) for its Vega charts, checks they drew data marks and
that Streamlit shows no exception or error, and saves a screenshot under
.lakehouse/screenshots (git-ignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from dashboard.data_as_of import upstream_tables
from dashboard.registry import PAGES
from ingestion.config import load_tables
from ingestion.settings import PROJECT_DIR, SETTINGS_FILE, Settings, load_settings, settings
from lakehouse import stack
from lakehouse.services import dashboard_server
from tests.conftest import SCREENSHOTS, free_port
from tests.dashboard.browser import render, screenshot

EXPOSURES = PROJECT_DIR / "models" / "marts" / "_marts__exposures.yml"
# Per page: how many charts it shows, and the fewest data marks each must draw
# (areas: one per category; pie: 20 buyers + the rest; bars and dots: one per row).
EXPECTED = {
    "revenue_by_category": (1, 2),
    "top_buyers": (1, 21),
    "buyer_scatter": (1, 20),
    "sell_through": (1, 5),
    "marketing": (2, 5),
}


@contextmanager
def _serve(conf: Settings) -> Iterator[str]:
    """Run the dashboard for the duration of a fixture; check it is gone afterwards."""
    url = dashboard_server.up(conf, log=lambda _: None)
    try:
        yield url
    finally:
        dashboard_server.down(conf, log=lambda _: None)
        assert stack.running_pid(dashboard_server.service(conf), conf) is None
        assert not stack.port_in_use(dashboard_server.HOST, conf.dashboard_port)


@pytest.fixture(scope="module")
def dashboard_url(daily_job: None) -> Iterator[str]:
    """The dashboard on a free port, over the session's home: its marts and the job's record."""
    with _serve(load_settings({"dashboard_port": free_port()})) as url:
        yield url


@pytest.fixture(scope="module")
def newest_source(daily_job: None) -> dict[str, str]:
    """Per bronze table, its own max(_cdc_source_ts) (UTC, as the pages write it)."""
    conf = settings()
    newest = {}
    for name in load_tables():
        sql = f"select unix_millis(max(_cdc_source_ts)) from {conf.bronze_database}.{name}"
        moment = datetime.fromtimestamp(stack.query(sql)[0][0] / 1000, UTC)
        newest[name] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return newest


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def test_every_page_is_an_exposure_with_the_marts_it_reads() -> None:
    exposures = yaml.safe_load(EXPOSURES.read_text())["exposures"]
    by_path = {exposure["url"].rsplit("/", 1)[1]: exposure for exposure in exposures}
    assert set(by_path) == {page.url_path for page in PAGES}
    bronze = [f"source('tickit', '{name}')" for name in load_tables()]
    for page in PAGES:
        exposure = by_path[page.url_path]
        assert exposure["url"] == f"http://127.0.0.1:8501/{page.url_path}"
        reads = [f"ref('{name}')" for name in page.marts] + bronze * page.reads_bronze
        assert sorted(exposure["depends_on"]) == sorted(reads)
    # The Pipeline page has a test of its own (test_pipeline_page.py).
    assert set(EXPECTED) == {page.url_path for page in PAGES if page.marts}


@pytest.mark.parametrize("url_path", list(EXPECTED))
def test_page_draws_its_charts_with_data(
    dashboard_url: str, page, url_path: str, newest_source: dict[str, str]
) -> None:
    charts, min_marks = EXPECTED[url_path]
    rendered = render(page, dashboard_url + url_path, charts)
    screenshot(page, SCREENSHOTS / f"dashboard-{url_path}.png")

    assert rendered.exceptions == []
    assert rendered.alerts == []
    assert len(rendered.charts) == charts
    for chart in rendered.charts:
        assert chart["marks"] >= min_marks, rendered.charts
        assert chart["width"] > 200 and chart["height"] > 200, rendered.charts
    # "Data as of": the newest source change in the bronze tables upstream of the
    # page's marts; TICKIT's sample days are long past, so the page says it is behind.
    (shown,) = [p for p in PAGES if p.url_path == url_path]
    upstream = upstream_tables(settings().dbt_target_path / "manifest.json", shown.marts)
    assert upstream and upstream <= set(newest_source)
    line = page.get_by_text("Data as of").inner_text()
    assert f"Data as of {max(newest_source[t] for t in upstream)} (" in line
    assert "behind: older than 26 h" in line and "built by the daily job" in line


def test_overview_links_every_page(dashboard_url: str, page) -> None:
    page.goto(dashboard_url, wait_until="domcontentloaded")
    links = page.locator('[data-testid="stPageLink"] a')
    links.nth(len(PAGES) - 1).wait_for(timeout=60_000)
    hrefs = {Path(href).name for href in (link.get_attribute("href") for link in links.all())}
    assert hrefs == {page.url_path for page in PAGES}


def test_unreachable_thrift_server_is_a_message_not_a_stack_trace(browser, tmp_path: Path) -> None:
    conf = load_settings(
        {"home": tmp_path, "dashboard_port": free_port(), "thrift_port": free_port()}
    )
    context = browser.new_context()
    try:
        with _serve(conf) as url:
            rendered = render(context.new_page(), url + "top_buyers", 1)
            assert rendered.exceptions == []
            assert rendered.charts == []
            assert len(rendered.alerts) == 1
            assert f"{conf.thrift_host}:{conf.thrift_port} is not reachable" in rendered.alerts[0]
            assert "lakehouse stack up" in rendered.alerts[0]
    finally:
        context.close()


def test_a_missing_mart_is_a_message_naming_the_job(local_stack: None) -> None:
    from dashboard.marts import MartsUnavailable, read, table

    with pytest.raises(MartsUnavailable, match="lakehouse jobs run daily"):
        read(f"select * from {table('no_such_mart')}")


def test_a_widget_reruns_its_chart(dashboard_url: str, page) -> None:
    render(page, dashboard_url + "top_buyers", 1)
    page.get_by_text("Include all other buyers").click()
    # Without "all other buyers" the pie has exactly the 20 top buyers' slices.
    page.wait_for_function(
        "() => document.querySelectorAll("
        "'[data-testid=\"stVegaLiteChart\"] svg g.role-mark > path').length === 20",
        timeout=60_000,
    )
    assert page.locator('[data-testid="stException"]').count() == 0


def test_bronze_marts_and_dashboard_follow_the_configured_names(dashboard_url: str, page) -> None:
    """Issue 13, acceptance 4: the names change through configuration only.

    tests/conftest.py sets a bronze database, dbt schema and marts schema other
    than conf/lakehouse.yml's for the whole run, and nothing else: the `daily`
    job's ingest and `dbt build` wrote under those names and under no default
    one, and a dashboard page draws its data from the configured marts schema.
    """
    conf = settings()
    defaults = yaml.safe_load(SETTINGS_FILE.read_text())
    names = ("bronze_database", "dbt_schema", "marts_schema")
    assert all(getattr(conf, name) != defaults[name] for name in names)

    databases = {row[0] for row in stack.query("show databases")}
    staging = f"{conf.dbt_schema}_staging"
    assert {conf.bronze_database, staging, conf.marts_schema} <= databases
    default_names = {defaults["bronze_database"], defaults["marts_schema"]}
    assert not {name for name in databases if name.startswith(defaults["dbt_schema"] + "_")}
    assert not default_names & databases
    bronze = {row[1] for row in stack.query(f"show tables in {conf.bronze_database}")}
    assert set(load_tables()) <= bronze
    marts = {row[1] for row in stack.query(f"show tables in {conf.marts_schema}")}
    assert {mart for listed in PAGES for mart in listed.marts} <= marts

    rendered = render(page, dashboard_url + "revenue_by_category", 1)
    assert rendered.exceptions == [] and rendered.alerts == []
    assert rendered.charts[0]["marks"] >= EXPECTED["revenue_by_category"][1]
    # The page names its source: the configured schema's fct_sales.
    assert page.get_by_text(f"{conf.marts_schema}.fct_sales").count() >= 1
