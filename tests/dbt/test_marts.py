"""dbt on the Thrift server: marts equal figures computed from the generator's expected state.

The session's `daily` job (tests/conftest.py) ingests one landing zone into
the configured bronze database and runs `dbt build` and `docs generate` on the test stack; the
marts are checked against figures worked out here, in plain Python, from
`_expected/*.jsonl`. Then more change batches, ingested while incremental runs
read bronze (two overlapping commits requested before a run and completed after
it, one after the other), the same checks (deletes, SCD2 versions), and a
full-refresh `dbt build` of the models and unit tests on the in-process
`session` target that must pass and end in the same marts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from ingestion.settings import settings
from lakehouse import stack
from lakehouse.cdc.generate import GenerateOptions, generate
from lakehouse.dbt_wrapper import run_dbt
from lakehouse.scheduler.jobs_file import build_args, get_job

from ..ingestion.bronze import expected, run_ingest, tables_for
from ..ingestion.test_ingest_crash import in_flight, signal_when, start_ingest, timeline

MARTS = settings().marts_schema
MART_KEYS = {
    "fct_sales": "sale_id",
    "fct_listings": "listing_id",
    "dim_events": "event_id",
    "dim_venues": "venue_id",
    "dim_dates": "date_id",
    "dim_non_buyers": "user_id",
    "dim_users": "user_version_key",
}


def dbt(args: list[str], target_path: Path, target: str = "local", conf=None) -> dict:
    """Run dbt on a target (the Thrift server by default); return its run results.

    Fails the test when dbt exits non-zero or any node errors or fails.
    """
    result = run_dbt([*args, "--target-path", str(target_path)], conf=conf, target=target)
    results = json.loads((target_path / "run_results.json").read_text())
    failed = [r["unique_id"] for r in results["results"] if r["status"] in ("error", "fail")]
    assert result.returncode == 0 and not failed, failed
    return results


def live(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r["_deleted"]]


def figures(landing: Path) -> dict:
    """What the marts must show, from the expected final state alone."""
    sales = live(expected(landing, "sales"))
    events = {e["eventid"]: e for e in live(expected(landing, "event"))}
    categories = {c["catid"]: c for c in live(expected(landing, "category"))}
    users = live(expected(landing, "users"))
    revenue: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for sale in sales:
        category = categories[events[sale["eventid"]]["catid"]]["catname"]
        revenue[(category, sale["saletime"][:7])] += Decimal(sale["pricepaid"])
    buyers = {s["buyerid"] for s in sales}
    return {
        "sales": len(sales),
        "sale_ids": {s["salesid"] for s in sales},
        "listings": len(live(expected(landing, "listing"))),
        "revenue": dict(revenue),
        "total_revenue": sum(Decimal(s["pricepaid"]) for s in sales),
        "buyers": len(buyers),
        "sellers": len({s["sellerid"] for s in sales}),
        "non_buyers": len([u for u in users if u["userid"] not in buyers]),
        "users": len(users),
    }


def check_marts(landing: Path, marts: str = MARTS) -> None:
    want = figures(landing)
    q = stack.query
    assert q(f"select count(*) from {marts}.fct_sales")[0][0] == want["sales"]
    assert {r[0] for r in q(f"select sale_id from {marts}.fct_sales")} == want["sale_ids"]
    assert q(f"select count(*) from {marts}.fct_listings")[0][0] == want["listings"]
    revenue = {
        (category, month): Decimal(str(total))
        for category, month, total in q(
            f"select category_name, date_format(sold_at, 'yyyy-MM'), sum(price_paid) "
            f"from {marts}.fct_sales group by 1, 2"
        )
    }
    assert revenue == want["revenue"]
    assert q(f"select count(distinct buyer_id) from {marts}.fct_sales")[0][0] == want["buyers"]
    assert q(f"select count(distinct seller_id) from {marts}.fct_sales")[0][0] == want["sellers"]
    assert q(f"select count(*) from {marts}.dim_non_buyers")[0][0] == want["non_buyers"]
    current = q(f"select count(*) from {marts}.dim_users where is_current")[0][0]
    assert current == want["users"]


def mart_contents() -> dict[str, list[tuple]]:
    """Every mart, ordered by its key, without load timestamps."""
    contents = {}
    for mart, key in MART_KEYS.items():
        columns = [
            r[0]
            for r in stack.query(f"describe {MARTS}.{mart}")
            # Load times and read horizons say when a row was written, not what it holds;
            # a fact row's bronze commit is the latest that changed it on the incremental
            # path, the latest behind it on a full build (fct_sales.sql).
            if r[0]
            and not r[0].startswith(("#", "_"))
            and "loaded_at" not in r[0]
            and r[0] not in ("bronze_read_horizon", "bronze_commit_time")
        ]
        select = ", ".join(f"`{c}`" for c in columns)
        contents[mart] = stack.query(f"select {select} from {MARTS}.{mart} order by `{key}`")
    return contents


# A process held stopped for longer than Spark's network timeout (120 s) finds its
# executor declared dead when it resumes: the hold spans dbt runs, so it gets 30 minutes.
HELD_SPARK_CONF = json.dumps({"spark.network.timeout": "1800s"})


def hold_in_flight(conf, table: str) -> tuple[subprocess.Popen, str]:
    """`lakehouse ingest` of one table, stopped (SIGSTOP) with its bronze commit in flight."""
    process = start_ingest(
        Path(conf.landing), Path(conf.lake), conf.bronze_database, table, spark_conf=HELD_SPARK_CONF
    )
    folder = timeline(conf, conf.bronze_database, table)
    signal_when(process, lambda: bool(in_flight(folder)), signal.SIGSTOP)
    return process, in_flight(folder)[0]


def stored_horizon(mart: str) -> str:
    return stack.query(f"select max(bronze_read_horizon) from {MARTS}.{mart}")[0][0]


def compactions(mart: str) -> int:
    """Completed compactions (`commit` on merge-on-read) on a fact's Hudi timeline."""
    instants = stack.query(f"call show_timeline(table => '{MARTS}.{mart}')")
    return sum(1 for _, action, state, *_ in instants if (action, state) == ("commit", "COMPLETED"))


def ingest_while_dbt_reads(spark, conf, tables: list, root: Path) -> dict:
    """Two overlapping commits, both requested before an incremental run reads bronze.

    The listing commit is requested first and the sales commit second; both
    are held in flight while every other table commits (newer instants) and
    a run reads. The sales commit completes and a second run reads while the
    listing commit is still pending, so its read horizon stays below the
    listing instant; the listing commit completes last, and a third run must
    still take its rows, though their instant is older than rows already
    merged. The first two are `dbt run` (the merge path, then compaction);
    the third is the hourly job's `dbt build`, which must leave compaction to
    the daily build; its run results are returned.
    """
    held: dict[str, subprocess.Popen] = {}
    hourly = ["build", *build_args(get_job("hourly", conf))]
    try:
        held["listing"], listing_instant = hold_in_flight(conf, "listing")
        held["sales"], sales_instant = hold_in_flight(conf, "sales")
        assert listing_instant < sales_instant
        run_ingest(spark, conf, [t for t in tables if t.name not in held])
        dbt(["run"], root / "target")
        for table, command in (("sales", ["run"]), ("listing", hourly)):
            os.killpg(held[table].pid, signal.SIGCONT)
            assert held.pop(table).wait(timeout=600) == 0
            compacted = compactions("fct_sales")
            results = dbt(command, root / "target")
            if table == "sales":
                assert stored_horizon("fct_sales") < listing_instant
        assert compacted >= 1 and compactions("fct_sales") == compacted
    finally:
        # Still held only when the test failed: stop them, or they outlive the run.
        for process in held.values():
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
    assert stored_horizon("fct_listings") >= listing_instant
    return results


def check_hourly_test_scope(results: dict, target: Path) -> None:
    """The hourly build tested the marts (an incremental fact's merged rows only, from
    the copy its post-hook keeps) and the sales' singular row checks on the same copy;
    the views' tests, the date checks, the whole-table reconciliations and the unit
    tests are the daily build's."""
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    tested = [nodes[r["unique_id"]] for r in results["results"] if r["unique_id"] in nodes]
    materialized = {key: node["config"].get("materialized") for key, node in nodes.items()}
    views = {r["message"] for r in results["results"] if materialized.get(r["unique_id"]) == "view"}
    assert views == {"unchanged"}  # no view's definition changed (unchanged_views)
    tested = [n for n in tested if n["resource_type"] == "test"]
    assert {n["fqn"][1] for n in tested} == {"marts", "singular"}
    assert not any(r["unique_id"].startswith("unit_test.") for r in results["results"])
    row_checks = {"assert_all_sale_amounts_are_positive", "assert_all_sale_quantities_are_positive"}
    # the date checks (on a staging view) and the reconciliations are the daily build's
    assert {n["name"] for n in tested if n["fqn"][1] == "singular"} == row_checks
    scoped = [
        n for n in tested
        if n.get("attached_node") == "model.tickit_lakehouse.fct_sales" or n["name"] in row_checks
    ]  # fmt: skip
    assert row_checks < {n["name"] for n in scoped}
    assert all("fct_sales__touched" in n["compiled_code"] for n in scoped)
    # The copies they read hold exactly the rows the run wrote (keep_touched_rows): those
    # carrying its read horizon, which fct_listings stored (the listing commit's rows).
    horizon = stored_horizon("fct_listings")
    for fact, key in (("fct_sales", "sale_id"), ("fct_listings", "listing_id")):
        touched = stack.query(f"select {key} from {MARTS}.{fact}__touched")
        merged = stack.query(
            f"select {key} from {MARTS}.{fact} where bronze_read_horizon = '{horizon}'"
        )
        assert sorted(touched) == sorted(merged), fact
    assert merged


@pytest.fixture(scope="module")
def built(daily_job, tmp_path_factory):
    """The session's `daily` job: bronze from one change batch, `dbt build`, docs."""
    assert daily_job.status == "success", daily_job
    conf = settings()
    root = tmp_path_factory.mktemp("dbt")
    return Path(conf.landing), conf, tables_for(conf.bronze_database), root, daily_job


def test_build_passes_with_tests_and_unit_tests(built) -> None:
    *_, job = built
    build = next(step for step in job.steps if step.name == "build")
    assert set(build.detail.statuses) <= {"success", "pass", "no-op"}, build.detail
    kinds = build.detail.kinds
    assert kinds["test"] >= 100
    assert kinds["unit_test"] >= 5
    assert kinds["model"] >= 20


def test_docs_describe_every_model_column_source_and_exposure(built) -> None:
    _, conf, *_ = built
    target = conf.dbt_target_path
    manifest = json.loads((target / "manifest.json").read_text())
    assert (target / "catalog.json").exists()
    nodes = manifest["nodes"].values()
    models = [n for n in nodes if n["resource_type"] == "model"]
    assert models and all(n["description"].strip() for n in models)
    undocumented = [
        f"{n['name']}.{c}" for n in models for c, col in n["columns"].items()
        if not col["description"].strip()
    ]  # fmt: skip
    assert undocumented == []
    assert all(s["description"].strip() for s in manifest["sources"].values())
    exposures = manifest["exposures"].values()
    assert len(exposures) >= 2
    assert all(e["description"] and e["owner"] and e["url"] for e in exposures)
    assert sum(n["resource_type"] == "test" for n in nodes) >= 100
    assert len(manifest["unit_tests"]) >= 5


def hudi_options(model: str, conf) -> str:
    """A model's Hudi table options as dbt compiled them, as an `options (...)` clause."""
    manifest = json.loads((conf.dbt_target_path / "manifest.json").read_text())
    options = manifest["nodes"][f"model.tickit_lakehouse.{model}"]["config"]["options"]
    return ", ".join(f"'{key}' = '{value}'" for key, value in options.items())


def test_a_fact_delete_is_never_stale_on_merge_on_read(built) -> None:
    """apache/hudi#19978 on a table with fct_sales' own options: a delete whose ordering
    value is older than the stored row's is ignored; the marker fct_sales writes,
    ordered by bronze's newest commit (never older than a stored row's), deletes, and a
    marker for a key the table does not hold changes nothing."""
    _, conf, *_ = built
    table = f"{MARTS}.test_stale_delete"
    q = stack.query
    q(f"drop table if exists {table}")
    q(
        f"create table {table} using hudi options ({hudi_options('fct_sales', conf)}, "
        "primaryKey = 'sale_key') as select 'k7' as sale_key, "
        "'20240110000000000' as bronze_commit_time"
    )

    def delete(key: str, ordering: str) -> list:
        q(
            f"merge into {table} as d using (select '{key}' as sale_key, '{ordering}' "
            "as bronze_commit_time, true as is_deleted_in_bronze) as s "
            "on s.sale_key = d.sale_key "
            "when matched and s.is_deleted_in_bronze then delete "
            "when not matched and not s.is_deleted_in_bronze then insert "
            "(sale_key, bronze_commit_time) values (s.sale_key, s.bronze_commit_time)"
        )
        return q(f"select sale_key, bronze_commit_time from {table}")

    try:
        stored = [("k7", "20240110000000000")]
        assert delete("k7", "20240109000000000") == stored  # older than the row: ignored
        assert delete("k8", "20240111000000000") == stored  # a key not stored: nothing
        assert delete("k7", "20240110000000000") == []  # bronze's newest commit: deleted
    finally:
        q(f"drop table if exists {table}")


def test_a_view_is_created_again_only_when_its_definition_changes(built) -> None:
    """A view carries a fingerprint of its SQL and descriptions (unchanged_views): a run
    leaves it alone while they are the same and recreates it when its SQL changes."""
    *_, root, _ = built
    view = "int_users_versioned_from_changelog"
    relation = ""
    asked = True
    logs = root / "views-logs"

    def run(*extra: str) -> str:
        nonlocal relation, asked
        shutil.rmtree(logs, ignore_errors=True)
        (result,) = dbt(["run", "-s", view, "--log-path", str(logs), *extra], root / "views")[
            "results"
        ]
        relation = result["relation_name"]
        asked = "show tblproperties" in (logs / "dbt.log").read_text()
        return result["message"]

    def interests() -> set[str]:
        return {r[0] for r in stack.query(f"describe {relation}") if r[0].startswith("likes_")}

    assert run() == "unchanged"
    # the stored fingerprint came from dbt's relation cache, not a query a view
    assert not asked
    try:
        assert run("--vars", "{interests: [sports]}") != "unchanged"  # its SQL changed
        assert interests() == {"likes_sports"}
    finally:
        assert run() != "unchanged"
    assert "likes_jazz" in interests()
    assert run() == "unchanged"
    assert run("--full-refresh") != "unchanged"


def test_marts_match_the_generator_after_a_full_build(built) -> None:
    landing, *_ = built
    check_marts(landing)


def test_incremental_build_applies_changes_and_equals_a_full_refresh(built, spark) -> None:
    landing, conf, tables, root, _ = built
    before = {r[0] for r in stack.query(f"select sale_id from {MARTS}.fct_sales")}
    generate(GenerateOptions(out=str(landing), scale=0.01, change_batches=3))
    hourly = ingest_while_dbt_reads(spark, conf, tables, root)
    check_marts(landing)
    check_hourly_test_scope(hourly, root / "target")

    deleted = {r["salesid"] for r in expected(landing, "sales") if r["_deleted"]}
    assert deleted & before, "a sale deleted at the source must leave fct_sales"
    # SCD2: users changed since the first build have more than one version.
    versions = stack.query(
        f"select user_id, count(*), sum(case when is_current then 1 else 0 end) "
        f"from {MARTS}.dim_users group by user_id"
    )
    assert any(count > 1 for _, count, _ in versions)
    assert all(current <= 1 for *_, current in versions)

    # A lookback re-reads the bronze commits before the stored horizon (here
    # every commit: they are minutes old): the compiled query's watermark is
    # older than the horizon, and the rows committed since it are merged again
    # (the post-hook's copy holds them; the marts still equal a full refresh
    # below).
    lookback = ["--vars", "{bronze_commit_lookback_minutes: 600}"]
    dbt(["run", "--select", "fct_sales", "fct_listings", *lookback], root / "target")
    compiled = root / "target" / "compiled" / "tickit_lakehouse" / "models" / "marts" / "sales"
    for fact in ("fct_sales", "fct_listings"):
        sql = (compiled / f"{fact}.sql").read_text()
        watermark = re.search(r"bronze_commit_time > '(\d+)'", sql).group(1)
        horizon = stored_horizon(fact)
        assert watermark < horizon
        rewritten = stack.query(f"select count(*) from {MARTS}.{fact}__touched")[0][0]
        stored = f"select count(*) from {MARTS}.{fact} where bronze_read_horizon = '{horizon}'"
        assert rewritten > 0 and stack.query(stored) == [(rewritten,)]
        # The events committed since count only where a column the fact carries from
        # them changed: compared with the values the last build that wrote rows kept
        # (keep_joined_state): every event bronze had committed up to the horizon the
        # fact stored (none when the change batches reached every event), so tagged.
        assert f"{fact}__known_event_id" in sql
        kept = stack.query(
            f"select event_id, fact_read_horizon from {MARTS}.{fact}__known_event_id"
        )
        assert {tag for _, tag in kept} <= {horizon}
        events = f"{settings().dbt_schema}_intermediate.int_events_joined_to_venues_and_categories"
        committed = stack.query(
            f"select event_id from {events} where bronze_commit_time <= '{horizon}'"
        )
        assert sorted(event for event, _ in kept) == sorted(event for (event,) in committed)

    incremental = mart_contents()
    # Merges drop the Parquet batch they merged from (drop_merge_batch).
    assert stack.query(f"show tables in {MARTS} like '*__batch'") == []
    # The full refresh runs in-process (`session` target, no server) as a `dbt build`
    # of every model and unit test: the same marts from the other path. Its data tests
    # are the ones the daily build already ran on the server (the same SQL), left out
    # to keep the suite's time.
    full = ["build", "--full-refresh", "--exclude", "resource_type:test"]
    results = dbt(full, root / "session", target="session")
    assert results["args"]["target"] == "session"
    kinds = {r["unique_id"].split(".")[0] for r in results["results"]}
    assert {"model", "unit_test"} <= kinds and "test" not in kinds
    assert mart_contents() == incremental
