"""pre-commit hook: no trailing whitespace and a final newline in text files."""

from __future__ import annotations

import sys


def problems(text: str) -> list[str]:
    found = [f"line {n}: trailing whitespace" for n, line in enumerate(text.splitlines(), 1)
             if line != line.rstrip()]  # fmt: skip
    if text and not text.endswith("\n"):
        found.append("no newline at end of file")
    return found


def main(paths: list[str]) -> int:
    failed = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError:
            continue
        for problem in problems(text):
            print(f"{path}: {problem}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
