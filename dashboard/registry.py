"""The dashboard's pages: URL path, title, script and the marts each one reads.

One list that the app builds its navigation from and that the tests check the
dbt exposures against, so an exposure's URL and `depends_on` cannot drift
from the page it documents.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """One dashboard page."""

    url_path: str
    title: str
    script: str  # under dashboard/views/
    marts: tuple[str, ...]  # dbt models in the marts schema that the page queries
    reads_bronze: bool = False  # reads every bronze table (its exposure depends on each source)


PAGES: tuple[Page, ...] = (
    Page(
        url_path="revenue_by_category",
        title="Revenue by category",
        script="revenue_by_category.py",
        marts=("fct_sales",),
    ),
    Page(
        url_path="top_buyers",
        title="Top buyers' share",
        script="top_buyers.py",
        marts=("fct_sales", "dim_users"),
    ),
    Page(
        url_path="buyer_scatter",
        title="Buyers: tickets vs revenue",
        script="buyer_scatter.py",
        marts=("fct_sales", "dim_users"),
    ),
    Page(
        url_path="sell_through",
        title="Sell-through",
        script="sell_through.py",
        marts=("fct_listings", "fct_sales"),
    ),
    Page(
        url_path="marketing",
        title="Marketing",
        script="marketing.py",
        marts=("dim_users", "dim_non_buyers"),
    ),
    Page(
        url_path="pipeline",
        title="Pipeline",
        script="pipeline.py",
        marts=(),
        reads_bronze=True,
    ),
)
