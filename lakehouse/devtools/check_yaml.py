"""pre-commit hook: every YAML file given parses (dbt's Jinja inside strings is fine)."""

from __future__ import annotations

import sys

import yaml


def main(paths: list[str]) -> int:
    failed = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                list(yaml.safe_load_all(handle))
        except yaml.YAMLError as error:
            print(f"{path}: {error}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
