"""Run one step of a job from conf/jobs.yml, as `lakehouse jobs run` would: one Airflow task.

Run by the project's interpreter (.venv/bin/python), never imported by Airflow.
It drives the same `JobRunner` as `lakehouse jobs run`, so a step means the same
thing from cron, Airflow or a terminal; Airflow adds only the scheduling,
retries and the split into tasks. The step's record (status, detail, the
tables it touched) is written as JSON to --result, for the Airflow task to
read back: a file, because Spark and dbt own stdout.

    .venv/bin/python dags/lakehouse_airflow/job_step.py hourly ingest --tables sales --result r.json

Exit codes: 0 success or skipped (see the record's status), 1 failed, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from ingestion.errors import UserError
from ingestion.settings import settings
from lakehouse import output
from lakehouse.scheduler.jobs_file import get_job
from lakehouse.scheduler.records import to_dict
from lakehouse.scheduler.steps import JobRunner


def _names(value: str) -> list[str]:
    return [name for name in value.split(",") if name]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", help="a job of conf/jobs.yml")
    parser.add_argument("step", help="the name of one of its steps")
    parser.add_argument("--tables", type=_names, default=[], help="ingest only these tables")
    parser.add_argument(
        "--touched", type=_names, default=[], help="tables an earlier ingest changed"
    )
    parser.add_argument("--result", type=Path, required=True, help="where to write the record")
    args = parser.parse_args(argv)

    conf = settings()
    job = get_job(args.job, conf)
    steps = {step.name: step for step in job.steps}
    if args.step not in steps:
        raise UserError(f"job '{job.name}' has no step '{args.step}'; has {list(steps)}")
    step = steps[args.step]
    if args.tables:
        step = replace(step, tables=tuple(args.tables))
    runner = JobRunner(job, conf, output.say)
    runner.touched = list(args.touched)
    record = runner.run_step(step)
    args.result.write_text(json.dumps({**to_dict(record), "touched": runner.touched}))
    return 1 if record.status == "failed" else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as error:
        output.error(str(error))
        sys.exit(2)
