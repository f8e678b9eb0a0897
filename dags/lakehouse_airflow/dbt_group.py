"""The dbt build step as an astronomer-cosmos task group: one task per model and one for its tests.

Cosmos renders the graph from dbt's manifest (LoadMode.DBT_MANIFEST), so
nothing here imports dbt: the Airflow environment has no dbt package. At run
time each task calls the project's own `.venv/bin/dbt` as a subprocess
(ExecutionMode.LOCAL, InvocationMode.SUBPROCESS) against the `local` target,
the Thrift server of conf/lakehouse.yml.

The manifest is `<dbt_target_path>/manifest.json`: written by every dbt command
of the project, and by `airflow/airflow` before it starts Airflow; a deployment
ships it with the DAGs (`dbt parse` in CI).

LAKEHOUSE_AIRFLOW_DBT_SELECT (dbt selectors, space separated; empty: every
model) narrows what the group renders. A full daily build is one dbt process
per task, ~30 of them; the test suite's end-to-end run selects a few models
to stay within CI's time limit while still running each kind of task.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cosmos import DbtTaskGroup, ExecutionConfig, ProfileConfig, ProjectConfig, RenderConfig
from cosmos.constants import (
    ExecutionMode,
    InvocationMode,
    LoadMode,
    SourceRenderingBehavior,
    TestBehavior,
    TestIndirectSelection,
)

from ingestion.settings import settings
from lakehouse.dbt_wrapper import dbt_variables
from lakehouse_airflow.project import (
    DBT_EXECUTABLE,
    DBT_PROFILE,
    DBT_PROJECT_NAME,
    DBT_TARGET,
    PROFILES_YML,
    REPO,
)

SELECT_VARIABLE = "LAKEHOUSE_AIRFLOW_DBT_SELECT"


class ManifestMissingError(FileNotFoundError):
    """No dbt manifest to render the models from; the message says how to make one."""


def manifest_path() -> Path:
    """dbt's manifest in the project's target path (conf/lakehouse.yml `dbt_target_path`)."""
    path = settings().dbt_target_path / "manifest.json"
    if not path.exists():
        raise ManifestMissingError(
            f"no dbt manifest at {path}: run `.venv/bin/lakehouse dbt -- parse` "
            "(airflow/airflow does it before starting Airflow)"
        )
    return path


def dbt_build_group(group_id: str, default_args: dict[str, Any]) -> DbtTaskGroup:
    """`dbt build` as a cosmos group: run, then test, per model; multi-parent tests last."""
    conf = settings()
    return DbtTaskGroup(
        group_id=group_id,
        project_config=ProjectConfig(
            dbt_project_path=REPO,
            manifest_path=manifest_path(),
            project_name=DBT_PROJECT_NAME,
            install_dbt_deps=False,
        ),
        profile_config=ProfileConfig(
            profile_name=DBT_PROFILE, target_name=DBT_TARGET, profiles_yml_filepath=PROFILES_YML
        ),
        execution_config=ExecutionConfig(
            execution_mode=ExecutionMode.LOCAL,
            invocation_mode=InvocationMode.SUBPROCESS,
            dbt_executable_path=DBT_EXECUTABLE,
            # A model's test task runs only the tests whose parents have all been built.
            test_indirect_selection=TestIndirectSelection.CAUTIOUS,
        ),
        render_config=RenderConfig(
            load_method=LoadMode.DBT_MANIFEST,
            select=os.environ.get(SELECT_VARIABLE, "").split(),
            test_behavior=TestBehavior.AFTER_EACH,
            # A test with several parents waits for all of them, in its own task.
            should_detach_multiple_parents_tests=True,
            # Sources with tests get a task that runs them, as `dbt build` would.
            source_rendering_behavior=SourceRenderingBehavior.WITH_TESTS_OR_FRESHNESS,
            # Owner, retries and schedule come from conf/jobs.yml, not from model meta.
            enable_owner_inheritance=False,
        ),
        operator_args={
            "install_deps": False,
            "emit_datasets": False,
            # Cosmos copies these into the worker's own environment too, so only
            # values every task shares; dbt writes into cosmos' temporary copy of
            # the project because airflow/airflow leaves DBT_TARGET_PATH unset.
            "env": dbt_variables(conf),
        },
        default_args=default_args,
    )
