"""Stand-ins for what py4j hands back for a failed Java call, for tests that need no JVM."""

from __future__ import annotations

import itertools

ANCIENT = (
    "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME] You may get a different "
    "result due to the upgrading to Spark >= 3.0:\nwriting dates before 1582-10-15 or "
    "timestamps before 1900-01-01T00:00:00Z\ninto Parquet files can be dangerous, ... You can "
    'set "spark.sql.parquet.datetimeRebaseModeInWrite" to "LEGACY" to rebase the\ndatetime '
    'values ... Or set the config to "CORRECTED" to write the datetime values as it is'
)
_IDS = itertools.count(1)


class _Class:
    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:  # Java's names, as py4j calls them
        return self.name

    def getSimpleName(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class FakeThrowable:
    """What py4j hands back for a Java Throwable: calls, each a round trip to the JVM."""

    def __init__(self, name: str, message: str | None, cause: FakeThrowable | None = None) -> None:
        self.name, self.message, self.cause = name, message, cause
        self.identity = next(_IDS)
        self.broken = False  # the JVM went away: every call fails

    def _call(self) -> None:
        if self.broken:
            raise ConnectionError("py4j: Answer from Java side is empty")

    def getClass(self) -> _Class:
        self._call()
        return _Class(self.name)

    def getMessage(self) -> str | None:
        self._call()
        return self.message

    def getCause(self) -> FakeThrowable | None:
        self._call()
        return self.cause

    def hashCode(self) -> int:
        self._call()
        return self.identity

    def toString(self) -> str:
        self._call()
        return f"{self.name}: {self.message}" if self.message is not None else self.name

    def getStackTrace(self) -> list[str]:
        self._call()
        return [f"org.example.Frame.f{n}(Frame.java:{n})" for n in range(3)]


class Py4JJavaError(Exception):
    """py4j's: its text is the call's, then the Java trace; `java_exception` what was thrown."""

    def __init__(self, java: FakeThrowable) -> None:
        super().__init__("An error occurred while calling o3232.save.\n", java)
        self.java_exception = java

    def __str__(self) -> str:
        return f"An error occurred while calling o3232.save.\n: {self.java_exception.toString()}"


class SparkUpgradeException(Exception):
    """PySpark's converted exception: the Java one it stands for is `_origin`."""

    def __init__(self, origin: FakeThrowable) -> None:
        super().__init__(origin.message)
        self._origin = origin


def hudi_failure(root: FakeThrowable) -> FakeThrowable:
    """What a Hudi write that failed in a task throws: the root three wrappers down."""
    task = FakeThrowable("org.apache.spark.SparkException", "[TASK_WRITE_FAILED] Task failed", root)
    job = FakeThrowable("org.apache.spark.SparkException", "Job aborted due to stage failure", task)
    return FakeThrowable("org.apache.hudi.exception.HoodieException", "Failed to write to Hudi",
                         job)  # fmt: skip
