"""The macros' folders keep their promise: pure Python, no Spark, no dbt run.

A macro that shadows a dbt or dbt-spark built-in changes what dbt does
everywhere, so every one sits in `macros/overrides/`, and each file there
names the package version it was written against: upgrading that package
fails here until someone has read the override against the new upstream
macro and moved the version in its header.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import dbt.include

from ingestion.settings import PROJECT_DIR

MACROS = PROJECT_DIR / "macros"
OVERRIDES = MACROS / "overrides"
DEFINED = re.compile(r"\{%-?\s*(?:macro\s+(\w+)|materialization\s+(\w+)\s*,\s*adapter\s*=)")
HEADER = re.compile(r"\A\{#- Overrides .*?-#\}", re.S)
VERSION = re.compile(r"(dbt-[a-z]+) (\d+\.\d+\.\d+)")


def defined_names(files: list[Path]) -> dict[str, Path]:
    """Each macro or materialization (as `materialization_<name>`) and its file."""
    found = {}
    for file in files:
        for macro, materialization in DEFINED.findall(file.read_text()):
            found[macro or f"materialization_{materialization}"] = file
    return found


def built_in_names() -> set[str]:
    """Every macro dbt-adapters' global project and dbt-spark define."""
    roots = [Path(path) for path in dbt.include.__path__]
    return set(defined_names([f for root in roots for f in root.rglob("*.sql")]))


def shadows(name: str, built_in: set[str]) -> bool:
    """A built-in's own name, or an adapter's dispatch of one (`spark__x` over `default__x`)."""
    plain = name.removeprefix("spark__")
    return name in built_in or (name != plain and {plain, f"default__{plain}"} & built_in != set())


def test_every_macro_that_shadows_a_built_in_is_in_overrides_and_only_those() -> None:
    built_in = built_in_names()
    assert {"run_query", "spark__get_merge_sql", "materialization_view"} <= built_in
    ours = defined_names(sorted(MACROS.rglob("*.sql")))
    misplaced = [n for n, f in ours.items() if shadows(n, built_in) != (f.parent == OVERRIDES)]
    assert misplaced == [], "an override belongs in macros/overrides/, and only an override"


def test_each_override_names_the_installed_version_it_was_written_against() -> None:
    for file in sorted(OVERRIDES.glob("*.sql")):
        header = HEADER.match(file.read_text())
        assert header, f"{file.name}: starts with '{{#- Overrides <package> <version>: ...'"
        named = VERSION.findall(header.group(0))
        assert named, f"{file.name}: its header names no package version"
        for package, version in named:
            assert metadata.version(package) == version, (
                f"{file.name} was written against {package} {version}, "
                f"{metadata.version(package)} is installed: read it against the upstream macro"
            )


def test_each_folder_describes_every_macro_it_defines() -> None:
    for folder in sorted(p for p in MACROS.iterdir() if p.is_dir()):
        described = set(
            re.findall(r"(?m)^  - name: (\w+)", (folder / f"_{folder.name}.yml").read_text())
        )
        sql = folder.glob("*.sql")
        defined = {n for n in defined_names(list(sql)) if not n.startswith("materialization_")}
        tests = set(
            re.findall(
                r"\{%-?\s*test\s+(\w+)", "".join(f.read_text() for f in folder.glob("*.sql"))
            )
        )
        assert described == defined | {f"test_{t}" for t in tests}, folder.name
