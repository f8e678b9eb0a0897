"""`lakehouse reconcile`'s comparison without databases: which columns, which keys differ.

The SQL each engine runs is checked on the live chain (tests/cdc/test_live_chain.py,
tests/cdc/test_whole_database.py), where PostgreSQL, MariaDB and Spark must agree.
"""

from __future__ import annotations

from lakehouse.reconcile import (
    MARIADB,
    NULL,
    SEP,
    SPARK,
    Column,
    Difference,
    comparable,
    keyed_differences,
)


def test_keys_come_first_and_columns_without_a_canonical_form_are_named() -> None:
    columns = [Column("name", "text"), Column("ratio", "double precision"),
               Column("ID", "integer"), Column("spec", "jsonb"), Column("new", "date")]  # fmt: skip
    kept, left = comparable(columns, {"name", "ratio", "id", "spec"}, ["id"])
    assert [c.name for c in kept] == ["ID", "name"]
    assert left == ["ratio (double precision)", "spec (jsonb)", "new (not in bronze)"]


def test_each_differing_key_is_named_with_its_first_differing_column() -> None:
    key = lambda *parts: chr(SEP).join(parts)  # noqa: E731
    columns = [Column("shop", "integer"), Column("sku", "integer"), Column("qty", "integer"),
               Column("note", "text")]  # fmt: skip
    source = [(key("1", "7"), "1", "7", "3", NULL), (key("1", "8"), "1", "8", "1", "a"),
              (key("2", "7"), "2", "7", "5", "b")]  # fmt: skip
    bronze = [(key("1", "7"), "1", "7", "3", NULL), (key("2", "7"), "2", "7", "5", "c"),
              (key("3", "1"), "3", "1", "1", NULL)]  # fmt: skip
    assert keyed_differences(source, bronze, columns, 2) == [
        Difference("shop=1, sku=8", "not in bronze"),
        Difference("shop=2, sku=7", "note: source b, bronze c"),
        Difference("shop=3, sku=1", "only in bronze"),
    ]


def test_a_boolean_in_bronze_is_written_as_the_0_or_1_its_mariadb_column_holds() -> None:
    flag = Column("flag", "tinyint")
    assert "cast(`flag` as char)" in MARIADB.canonical(flag)
    assert "cast(cast(`flag` as int) as string)" in SPARK.canonical(flag, bronze_boolean=True)
    assert "cast(`flag` as string)" in SPARK.canonical(flag)
