"""Landing page: what each page shows and where its data comes from."""

from __future__ import annotations

import streamlit as st

from dashboard.registry import PAGES
from ingestion.settings import settings

conf = settings()
st.title("TICKIT dashboard")
st.markdown(
    f"Charts over the dbt marts in `{conf.marts_schema}`, read through the Spark Thrift Server at "
    f"`{conf.thrift_host}:{conf.thrift_port}`. The marts are rebuilt by the daily job "
    "(`lakehouse jobs run daily`); query results are cached for a minute."
)
for page in PAGES:
    reads = [f"`{name}`" for name in page.marts]
    if page.reads_bronze:
        reads.append(f"bronze `{conf.bronze_database}`, its quarantine and the run records")
    st.page_link(f"views/{page.script}", label=f"{page.title} (reads {', '.join(reads)})")
