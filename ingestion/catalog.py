"""Register Hudi tables in the catalog the Thrift server reads.

Tables are registered once by location (`USING hudi LOCATION ...`); Hudi's
catalog reads the schema and file listing from the table itself at query
time, so every new commit and every added column is visible without a refresh;
only a session that compacted a table itself drops what it had cached of it
(`forget_listings`).
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from ingestion.errors import UserError
from ingestion.paths import to_hadoop_uri

# A merge-on-read bronze table's two views beside its own name, as Hudi's Hive
# sync names them: `_rt` merges the log files (the snapshot, as the base name
# does), `_ro` reads the base files alone, as of the last compaction.
MERGE_ON_READ_VIEWS = {"_rt": False, "_ro": True}  # suffix -> read-optimized


def merge_on_read_names(table: str) -> dict[str, bool | None]:
    """A merge-on-read table's catalog names: its own (None) and its views' (read-optimized?)."""
    return {table: None, **{table + suffix: ro for suffix, ro in MERGE_ON_READ_VIEWS.items()}}


def ensure_database(spark: SparkSession, database: str, location: str) -> None:
    spark.sql(f"create database if not exists `{database}` location '{to_hadoop_uri(location)}'")


class CatalogConflictError(UserError):
    """The catalog already has the table, stored somewhere else."""


def _same_location(registered: str, uri: str) -> bool:
    def norm(text: str) -> str:
        return text.rstrip("/").replace("file:///", "/").replace("file:/", "/")

    return norm(registered) == norm(uri)


def is_registered(spark: SparkSession, database: str, table: str) -> bool:
    """Whether the catalog has the table: one metastore call, no Hudi table loaded."""
    return bool(spark._jsparkSession.sharedState().externalCatalog().tableExists(database, table))


def register(
    spark: SparkSession, database: str, table: str, path: str, read_optimized: bool | None = None
) -> None:
    """Create the catalog entry for a Hudi table at `path` unless it exists already.

    A table of the same name at another location is an error, never re-pointed:
    the catalog may be shared with other lakes (and other people).
    `read_optimized` (a merge-on-read table's views) is kept in the entry's
    options as Hudi's Hive sync keeps it (`hoodie.query.as.ro.table`), so every
    reader of that name gets that view.
    """
    uri = to_hadoop_uri(path).rstrip("/")
    # The metastore itself, not Spark's catalog API: that would load the Hudi
    # table (meta client, schema, file listing) only to read its location.
    metastore = spark._jsparkSession.sharedState().externalCatalog()
    if metastore.tableExists(database, table):
        location = str(metastore.getTable(database, table).location())
        if not _same_location(location, uri):
            raise CatalogConflictError(
                f"{database}.{table} is registered at {location}, not at {uri}; "
                "drop it or write to another database"
            )
        return
    options = (
        ""
        if read_optimized is None
        else f" options ('hoodie.query.as.ro.table' = '{str(read_optimized).lower()}')"
    )
    spark.sql(f"create table `{database}`.`{table}` using hudi location '{uri}'{options}")


def forget_listings(spark: SparkSession, database: str, tables: list[str]) -> None:
    """Drop this session's cached relations of `tables`, so their next query lists files anew.

    A compaction through Hudi's procedure writes new base files without telling
    the session's relation cache: a name read before it (`_ro` most visibly)
    could keep answering from the files it listed then. Nothing is loaded here;
    a name the session never read is a no-op.
    """
    cache = spark._jsparkSession.sessionState().catalog()
    for table in tables:
        cache.invalidateCachedTable(
            spark._jvm.org.apache.spark.sql.catalyst.QualifiedTableName(database, table)
        )
