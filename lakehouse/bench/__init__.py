"""Benchmarks: `lakehouse bench ingest` (ours vs HoodieStreamer vs plain Spark) and `bench dbt`.

Every contender runs in its own process, measured the same way (wall seconds,
peak RSS of its process tree), on the same landing files and Spark settings.
"""
