"""A failure as the one line a person reads: its root cause, named, and the fix when known.

A failure inside Spark or Hudi reaches Python as py4j's `Py4JJavaError`, whose
own message is only "An error occurred while calling o3232.save": what went
wrong is at the end of the Java exception's cause chain (`getCause()`), often
three wrappers down (a job aborted, a task failed, the root). PySpark's
converted exceptions (`pyspark.errors.SparkUpgradeException`, ...) keep their
Java exception as `_origin`. This module follows Python's `__cause__` chain,
then the Java one, to the root, and names it; the CLI's one-line error, its
saved trace and the run records all take their text from here.

Only duck typing: no JVM, no py4j import, so it is tested with stand-ins. A
py4j call that fails (the JVM gone) ends the chain where it got to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64  # causes followed at most, whatever a cycle check misses
LINE_CHARS = 300  # of the root cause's message in the one line
HEAD_CHARS = 200  # of the outer error's message after it


@dataclass(frozen=True)
class Cause:
    """One link of an error's chain: a Python exception or a Java Throwable."""

    kind: str  # the class's simple name: SparkUpgradeException
    message: str  # the whole message ("" when there is none)
    java: Any = None  # the Java Throwable (a py4j JavaObject), when the link is Java's

    @property
    def first_line(self) -> str:
        lines = self.message.strip().splitlines()
        return lines[0].strip().rstrip(" :.") if lines else ""

    def line(self, chars: int = LINE_CHARS) -> str:
        text = self.first_line
        text = text if len(text) <= chars else text[: chars - 3] + "..."
        return f"{self.kind}: {text}" if text else self.kind


def _text(error: BaseException) -> str:
    """`str(error)`, or "" when even that fails (py4j asks the JVM for it)."""
    try:
        return str(error)
    except Exception:
        return ""


def _java_of(error: BaseException) -> tuple[Any, bool]:
    """The Java exception a Python one carries, and whether it is the error itself.

    py4j's `java_exception` is what the Java call threw, a link of its own;
    PySpark's `_origin` is the very exception it converted, so its chain starts
    at the origin's cause.
    """
    java = getattr(error, "java_exception", None)
    if java is not None:
        return java, False
    return getattr(error, "_origin", None), True


def _java_cause(java: Any) -> Cause | None:
    try:
        kind = java.getClass()
        name = str(kind.getSimpleName() or "") or str(kind.getName()).rsplit(".", 1)[-1]
        message = java.getMessage()
        return Cause(name, "" if message is None else str(message), java)
    except Exception:  # the JVM gone, or not a Throwable after all
        return None


def _next_java(java: Any, seen: set[Any]) -> Any:
    """The Java cause of a Throwable, or None at the root, on a cycle or a py4j failure."""
    try:
        cause = java.getCause()
        if cause is None:
            return None
        identity = cause.hashCode()  # Throwable's identity hash: equal means the same
    except Exception:
        return None
    if identity in seen:
        return None
    seen.add(identity)
    return cause


def java_chain(java: Any) -> list[Cause]:
    """A Java Throwable and its causes, outermost first."""
    links: list[Cause] = []
    seen: set[Any] = set()
    try:
        seen.add(java.hashCode())
    except Exception:
        return links
    while java is not None and len(links) < MAX_DEPTH:
        cause = _java_cause(java)
        if cause is None:
            break
        links.append(cause)
        java = _next_java(java, seen)
    return links


def chain(error: BaseException) -> list[Cause]:
    """The error and every cause of it, outermost first: Python's `__cause__`s, then Java's."""
    links: list[Cause] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(links) < MAX_DEPTH:
        seen.add(id(current))
        links.append(Cause(type(current).__name__, _text(current)))
        java, itself = _java_of(current)
        if java is not None:
            if itself:
                try:
                    java = java.getCause()
                except Exception:
                    java = None
            if java is not None:
                links += java_chain(java)
            break
        current = current.__cause__
    return links[:MAX_DEPTH]


def root_cause(error: BaseException) -> Cause | None:
    """The deepest cause of the error; None when it has none (it is its own root)."""
    links = chain(error)
    return links[-1] if len(links) > 1 else None


ANCIENT_DATETIME = re.compile(r"\b(READ|WRITE)_ANCIENT_DATETIME\b")
REBASE_SETTING = re.compile(r"spark\.sql\.\w+\.\w*RebaseModeIn(?:Read|Write)")


def fix_for(cause: Cause) -> str:
    """What to do about a root cause a user can fix; "" for the others."""
    found = ANCIENT_DATETIME.search(cause.message)
    named = REBASE_SETTING.findall(cause.message)
    if found is None and not (cause.kind == "SparkUpgradeException" and named):
        return ""
    direction = found.group(1).title() if found else ("Read" if "InRead" in named[0] else "Write")
    wanted = [s for s in named if s.endswith(direction)]
    settings = dict.fromkeys([*wanted, f"spark.sql.parquet.datetimeRebaseModeIn{direction}"])
    them = "them" if len(settings) > 1 else "it"
    return (
        "fix: the Spark session that ran this lacks "
        + " and ".join(f"{s}=CORRECTED" for s in settings)
        + f" (the project's sessions set {them}; a Spark session built any other way must too)"
    )


def one_line(error: BaseException) -> str:
    """The error as one line: its root cause first, then what it surfaced as, then the fix."""
    links = chain(error)
    head = links[0].line(HEAD_CHARS)
    if len(links) == 1:
        return head
    root = links[-1]
    via = [link.kind for link in links[1:-1]]
    where = f"root cause of {head}" + (f", via {' > '.join(via)}" if via else "")
    fix = fix_for(root)
    return f"{root.line()} ({where})" + (f"; {fix}" if fix else "")


def error_text(error: BaseException) -> str:
    """What `lakehouse` prints after "error: " and a run record keeps as its error.

    A UserError's own message (it names the cause and the fix), a storage
    failure's line, or the root cause of anything else (`one_line`).
    """
    from ingestion.errors import UserError
    from ingestion.preflight import storage_failure

    if isinstance(error, UserError):
        return _text(error).strip()
    return storage_failure(error) or one_line(error)


def root_trace(error: BaseException) -> str:
    """The Java root cause's own stack trace (`toString()` and its frames), or ""."""
    links = [link for link in chain(error) if link.java is not None]
    if not links:
        return ""
    root = links[-1].java
    try:
        lines = [str(root.toString())]
        lines += [f"\tat {frame}" for frame in root.getStackTrace()]  # py4j: toString()
    except Exception as failure:  # the JVM gone: the message is all there is
        return f"{links[-1].kind}: {links[-1].message}\n(stack trace unavailable: {failure!r})\n"
    return "\n".join(lines) + "\n"
