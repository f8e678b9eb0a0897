"""`make run` as the getting-started page writes it, then the stop commands it prints.

The run itself is the session's `make_run` fixture (tests/make_run.py): the
same end-to-end build is the daily job the `daily_job` group's tests read, on
this run's stack. Its stop line's `stack down` is checked when the session ends.
"""

from __future__ import annotations

import re

from tests.make_run import MakeRun, started_urls

STEPS = (
    "1/4 local stack",
    "2/4 TICKIT CDC at scale 0.01",
    "3/4 the daily job",
    "4/4 documentation site and dashboard",
)


def test_make_run_prints_its_steps_and_where_to_look(make_run: MakeRun) -> None:
    printed = make_run.printed
    assert [step for step in STEPS if step in printed] == list(STEPS)
    events = re.search(r"done in \d+s: ([\d,]+) events in bronze, marts built\.", printed)
    assert events and int(events.group(1).replace(",", "")) == make_run.record.ingested_events > 0
    assert [(s.name, s.status) for s in make_run.record.steps] == [
        (name, "success") for name in ("ingest", "maintain", "freshness", "build", "docs")
    ]


def test_make_run_serves_the_docs_site_and_dashboard_until_its_stop_commands(
    make_run: MakeRun,
) -> None:
    assert len(started_urls(make_run.printed)) == 2
    assert make_run.answered == (True, True)
    stopped = make_run.servers_stopped
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert make_run.answered_after == (False, False)
