"""A query plan seen before reuses its compiled classes (ingestion/spark.py, CODEGEN_CACHE_ENTRIES).

Spark sizes its compiled-class cache from the settings of the thread that
first compiles, once per JVM. In the ingestion engine that was a worker thread
with no active session: the cache kept Spark's default 100 entries and the
continuous service compiled every class of every micro-batch anew. The check
runs in a fresh driver, where a thread without a session touches the cache
first, as the engine's did.
"""

from __future__ import annotations

import subprocess
import sys

from ingestion.spark import CODEGEN_CACHE_ENTRIES

DRIVER = """
import threading
from ingestion.spark import build_session

spark = build_session("codegen-cache-check")
metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
codegen = spark._jvm.org.apache.spark.sql.catalyst.expressions.codegen
# A new thread has no active session in the JVM: the engine's worker threads.
first = threading.Thread(target=lambda: codegen.CodeGenerator.compileTime())
first.start()
first.join()


def run_plan(factor):
    frame = spark.range(100).selectExpr(f"id * {factor} + 1 as x", "cast(id as string) as s")
    frame.where("x % 7 = 1").groupBy("s").count().collect()
    return metrics.METRIC_COMPILATION_TIME().getCount()


start = run_plan(3)
for factor in range(10, 70):
    between = run_plan(factor)
print("between", between - start)
print("again", run_plan(3) - between)
"""


def test_a_plan_seen_before_reuses_its_classes_after_a_hundred_others() -> None:
    assert CODEGEN_CACHE_ENTRIES > 1000
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = dict(line.split() for line in done.stdout.splitlines() if line[:1].isalpha())
    # More classes than Spark's default cache holds were compiled in between ...
    assert int(figures["between"]) > 100
    # ... and the first plan's classes were still there: nothing compiled again.
    assert int(figures["again"]) == 0
