"""Entry point of the dashboard: `lakehouse dashboard up` runs `streamlit run dashboard/app.py`.

Navigation is built from `dashboard.registry`, the same list the dbt
exposures are checked against.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.registry import PAGES

VIEWS = Path(__file__).parent / "views"

st.set_page_config(page_title="TICKIT dashboard", layout="wide")
navigation = st.navigation(
    [st.Page(VIEWS / "overview.py", title="Overview", default=True)]
    + [st.Page(VIEWS / page.script, title=page.title, url_path=page.url_path) for page in PAGES]
)
navigation.run()
