"""Entry point of the dashboard: `lakehouse dashboard up` runs `streamlit run dashboard/app.py`.

Navigation is built from `dashboard.registry`, the same list the dbt
exposures are checked against; each page over the marts opens with their
"data as of" (`ui.data_as_of`).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import ui
from dashboard.registry import PAGES

VIEWS = Path(__file__).parent / "views"
BY_PATH = {page.url_path: page for page in PAGES}

st.set_page_config(page_title="TICKIT dashboard", layout="wide")
navigation = st.navigation(
    [st.Page(VIEWS / "overview.py", title="Overview", default=True)]
    + [st.Page(VIEWS / page.script, title=page.title, url_path=page.url_path) for page in PAGES]
)
# Every page over the marts says first how fresh they are.
if (shown := BY_PATH.get(navigation.url_path)) is not None and shown.marts:
    ui.data_as_of(shown.marts)
navigation.run()
