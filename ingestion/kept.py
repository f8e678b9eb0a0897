"""Frames a table's run reads more than once, computed once and kept with a short plan.

A batch's classified lines and its decoded rows are read by several Spark
actions: the schema versions, the count, each Hudi write. Cached, every one
of those actions analysed and optimised the whole decoding plan again and
matched it against the cache: most of the driver's work for a small batch.
A local checkpoint stores the same rows (memory, then disk) and hands the
later actions a plan of one node. The 1% change batch at --scale 1 took
0.84x the seconds (docs/benchmarks.md).
"""

from __future__ import annotations

from pyspark.sql import DataFrame


def kept(frame: DataFrame) -> DataFrame:
    """`frame`, computed by the first action that reads it and stored for the others.

    Unlike a cache, the stored rows are not recomputed if an executor holding
    them is lost: that batch fails, and its table's checkpoint makes the next
    run apply it again.
    """
    return frame.localCheckpoint(eager=False)


def release(frame: DataFrame) -> None:
    """Free a `kept` frame's stored rows now, not when the JVM's garbage collector finds them.

    The continuous service keeps one session for hours: its batches' rows must
    not wait for a collection to leave the block manager.
    """
    frame._jdf.queryExecution().logical().rdd().unpersist(False)
