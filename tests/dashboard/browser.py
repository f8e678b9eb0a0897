"""Headless Chromium helpers for the dashboard tests: open a page, wait for its charts, inspect.

The browser itself is the session's `browser` fixture (tests/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page

# Queries go through the Thrift server; a cold Spark plan takes seconds on 2 shared cores.
RENDER_TIMEOUT_MS = 180_000

# True once the page has settled: the script has finished (Streamlit shows its
# status widget while a run is under way) and Vega has drawn every expected chart
# (a chart without data still draws its mark groups, empty, so the test reports it
# at once instead of waiting out the deadline); or Streamlit shows an exception or
# an error/warning alert (reported by the test).
SETTLED_JS = """
(expected) => {
    if (document.querySelector('[data-testid="stException"], [data-testid="stAlert"]')) {
        return true;
    }
    if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
    const charts = document.querySelectorAll('[data-testid="stVegaLiteChart"]');
    if (charts.length < expected) return false;
    return [...charts].every((chart) => chart.querySelector('svg g.role-mark'));
}
"""
# Per chart: the data marks Vega drew (paths with geometry inside mark groups;
# axes, legends and titles are other roles), and the chart's pixel size.
CHARTS_JS = """
() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map((chart) => {
    const marks = [...chart.querySelectorAll('svg g.role-mark > path')]
        .filter((path) => (path.getAttribute('d') || '').length > 2);
    const box = chart.getBoundingClientRect();
    return {marks: marks.length, width: box.width, height: box.height};
})
"""


@dataclass(frozen=True)
class Rendered:
    """What a loaded page shows."""

    charts: list[dict]  # per chart: marks, width, height
    exceptions: list[str]  # texts of Streamlit exception boxes
    alerts: list[str]  # texts of st.error / st.warning boxes


def render(page: Page, url: str, expected_charts: int) -> Rendered:
    """Open a URL and wait (up to the deadline) until its charts have drawn or it shows an error."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(SETTLED_JS, arg=expected_charts, timeout=RENDER_TIMEOUT_MS)
    return Rendered(
        charts=page.evaluate(CHARTS_JS),
        exceptions=page.locator('[data-testid="stException"]').all_inner_texts(),
        alerts=page.locator('[data-testid="stAlert"]').all_inner_texts(),
    )


def screenshot(page: Page, path: Path) -> None:
    """Save the whole page: Streamlit scrolls inside its main block, so grow the viewport to fit."""
    height = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? 0"
    )
    width = page.viewport_size["width"] if page.viewport_size else 1400
    page.set_viewport_size({"width": width, "height": max(height, 600)})
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=path, full_page=True)


# Per st.table: its column headers and each row's cells by header (the index column is "").
TABLES_JS = """
() => [...document.querySelectorAll('[data-testid="stTable"] table')].map((table) => {
    const headers = [...table.querySelectorAll('thead th')].map((cell) => cell.innerText.trim());
    const rows = [...table.querySelectorAll('tbody tr')].map((row) =>
        Object.fromEntries([...row.querySelectorAll('th, td')]
            .map((cell, index) => [headers[index] ?? String(index), cell.innerText.trim()])));
    return {headers, rows};
})
"""


def tables(page: Page) -> list[dict]:
    """Every st.table on the page: {headers, rows}, each row a dict of header to cell text."""
    return page.evaluate(TABLES_JS)
