"""The TICKIT dashboard: a Streamlit app over the dbt marts, read through the Thrift server."""
