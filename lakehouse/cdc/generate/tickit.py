"""The TICKIT data model: tables, columns, keys, source systems, cardinalities.

This is docs/contracts.md as code. Rows are plain lists in column order with
Python values chosen so encoding is cheap: ints for smallint/int, `str` for
char/varchar, days since 1970-01-01 for `date`, whole seconds since the epoch
(UTC) for `timestamp`, cents (the unscaled value) for `decimal(8,2)`, and bools.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

# TICKIT's calendar: 365 days from 2008-01-01; dateid 1827 is 2008-01-01 as in TICKIT.
FIRST_DATEID = 1827
FIRST_DAY = (date(2008, 1, 1) - date(1970, 1, 1)).days
CALENDAR_DAYS = 365
SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Column:
    """One source column: TICKIT name, SQL type, nullability, column default."""

    name: str
    sql_type: str
    nullable: bool = True
    default: object | None = None

    @property
    def kind(self) -> str:
        """The type without its length: smallint, int, varchar, char, date, ..."""
        return self.sql_type.split("(")[0]


@dataclass(frozen=True)
class SourceSystem:
    """One operational database and the Debezium connector that captures it."""

    name: str
    connector: str
    database: str
    schema: str | None
    # Debezium's server-side topic name before the sink's RegexRouter shortens it:
    # SQL Server topics carry the database and the schema (`tickit.crm.dbo.user`).
    topic_parts: tuple[str, ...]


@dataclass(frozen=True)
class ForeignKey:
    """A reference from `column` of a child table to the key of `parent`."""

    column: str
    parent: str


@dataclass(frozen=True)
class Table:
    """One TICKIT table as a source system holds it and the bronze layer names it."""

    name: str
    source_table: str
    system: SourceSystem
    key: str
    columns: tuple[Column, ...]
    rows_at_scale_1: int
    scales: bool
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def topic(self) -> str:
        return f"tickit.{self.system.name}.{self.source_table}"

    @property
    def server_topic(self) -> str:
        """The topic name Debezium derives, which names its Connect schemas."""
        return ".".join(("tickit", *self.system.topic_parts, self.source_table))

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def index(self, column: str) -> int:
        return self.column_names.index(column)

    def rows_at(self, scale: float) -> int:
        """Linear in the scale, at least one row; fixed for categories and dates."""
        if not self.scales:
            return self.rows_at_scale_1
        return max(1, int(self.rows_at_scale_1 * scale + 0.5))


EMS = SourceSystem("ems", "postgresql", database="tickit", schema="ems", topic_parts=("ems",))
ECOMM = SourceSystem("ecomm", "mysql", database="ecomm", schema=None, topic_parts=("ecomm",))
CRM = SourceSystem("crm", "sqlserver", database="crm", schema="dbo", topic_parts=("crm", "dbo"))
SYSTEMS: tuple[SourceSystem, ...] = (EMS, ECOMM, CRM)

LOYALTY_TIER = Column("loyaltytier", "varchar(10)")

_LIKES = (
    "likesports",
    "liketheatre",
    "likeconcerts",
    "likejazz",
    "likeclassical",
    "likeopera",
    "likerock",
    "likevegas",
    "likebroadway",
    "likemusicals",
)

CATEGORY = Table(
    "category",
    "category",
    EMS,
    "catid",
    (
        Column("catid", "smallint", nullable=False),
        Column("catgroup", "varchar(10)"),
        Column("catname", "varchar(10)"),
        Column("catdesc", "varchar(50)"),
    ),
    rows_at_scale_1=11,
    scales=False,
)
VENUE = Table(
    "venue",
    "venue",
    EMS,
    "venueid",
    (
        Column("venueid", "smallint", nullable=False),
        Column("venuename", "varchar(100)"),
        Column("venuecity", "varchar(30)"),
        Column("venuestate", "char(2)"),
        Column("venueseats", "int"),
    ),
    rows_at_scale_1=202,
    scales=True,
)
DATE = Table(
    "date",
    "date",
    ECOMM,
    "dateid",
    (
        Column("dateid", "smallint", nullable=False),
        Column("caldate", "date", nullable=False),
        Column("day", "char(3)", nullable=False),
        Column("week", "smallint", nullable=False),
        Column("month", "char(5)", nullable=False),
        Column("qtr", "char(5)", nullable=False),
        Column("year", "smallint", nullable=False),
        Column("holiday", "boolean", default=False),
    ),
    rows_at_scale_1=CALENDAR_DAYS,
    scales=False,
)
EVENT = Table(
    "event",
    "event",
    EMS,
    "eventid",
    (
        Column("eventid", "int", nullable=False),
        Column("venueid", "smallint", nullable=False),
        Column("catid", "smallint", nullable=False),
        Column("dateid", "smallint", nullable=False),
        Column("eventname", "varchar(200)"),
        Column("starttime", "timestamp"),
    ),
    rows_at_scale_1=8_798,
    scales=True,
    foreign_keys=(
        ForeignKey("venueid", "venue"),
        ForeignKey("catid", "category"),
        ForeignKey("dateid", "date"),
    ),
)
USERS = Table(
    "users",
    "user",
    CRM,
    "userid",
    (
        Column("userid", "int", nullable=False),
        Column("username", "char(8)"),
        Column("firstname", "varchar(30)"),
        Column("lastname", "varchar(30)"),
        Column("city", "varchar(30)"),
        Column("state", "char(2)"),
        Column("email", "varchar(100)"),
        Column("phone", "char(14)"),
        *(Column(name, "boolean") for name in _LIKES),
    ),
    rows_at_scale_1=49_990,
    scales=True,
)
LISTING = Table(
    "listing",
    "listing",
    ECOMM,
    "listid",
    (
        Column("listid", "int", nullable=False),
        Column("sellerid", "int", nullable=False),
        Column("eventid", "int", nullable=False),
        Column("dateid", "smallint", nullable=False),
        Column("numtickets", "smallint", nullable=False),
        Column("priceperticket", "decimal(8,2)"),
        Column("totalprice", "decimal(8,2)"),
        Column("listtime", "timestamp"),
    ),
    rows_at_scale_1=192_497,
    scales=True,
    foreign_keys=(
        ForeignKey("sellerid", "users"),
        ForeignKey("eventid", "event"),
        ForeignKey("dateid", "date"),
    ),
)
SALES = Table(
    "sales",
    "sale",
    ECOMM,
    "salesid",
    (
        Column("salesid", "int", nullable=False),
        Column("listid", "int", nullable=False),
        Column("sellerid", "int", nullable=False),
        Column("buyerid", "int", nullable=False),
        Column("eventid", "int", nullable=False),
        Column("dateid", "smallint", nullable=False),
        Column("qtysold", "smallint", nullable=False),
        Column("pricepaid", "decimal(8,2)"),
        Column("commission", "decimal(8,2)"),
        Column("saletime", "timestamp"),
    ),
    rows_at_scale_1=172_456,
    scales=True,
    foreign_keys=(
        ForeignKey("listid", "listing"),
        ForeignKey("sellerid", "users"),
        ForeignKey("buyerid", "users"),
        ForeignKey("eventid", "event"),
        ForeignKey("dateid", "date"),
    ),
)

# In the order each connector snapshots them (per system, by table name), which
# is also the order change batches visit them.
TABLES: dict[str, Table] = {
    table.name: table for table in (CATEGORY, EVENT, VENUE, DATE, LISTING, SALES, USERS)
}


def tables_of(system: SourceSystem) -> tuple[Table, ...]:
    return tuple(table for table in TABLES.values() if table.system is system)


def columns_of(table: Table, schema_version: int) -> tuple[Column, ...]:
    """The table's columns in a schema version: users gains `loyaltytier` in version 2."""
    if table is USERS and schema_version >= 2:
        return (*table.columns, LOYALTY_TIER)
    return table.columns
