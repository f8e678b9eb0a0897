"""The inserts, updates and deletes of a change batch, table by table.

Each operation picks its rows the way the business would (a new listing on a
live event by a live seller, a sale on a listing with tickets left, a refund,
a price cut) and never breaks a reference: a delete only removes a row no
live row points to, and otherwise becomes an update. Dates are reference
data and are never deleted.
"""

from __future__ import annotations

import random

from lakehouse.cdc.generate import rows
from lakehouse.cdc.generate import vocabulary as words
from lakehouse.cdc.generate.state import Change, SourceDatabase
from lakehouse.cdc.generate.tickit import (
    CATEGORY,
    DATE,
    EVENT,
    LISTING,
    SALES,
    USERS,
    VENUE,
    Table,
)

_DELETE_ATTEMPTS = 12
_SALE_ATTEMPTS = 24
# Share of listing and sale inserts that arrive as one multi-row INSERT statement.
_MULTI_ROW_SHARE = 0.15


class Mutator:
    """Applies plausible changes to the source databases and returns them."""

    def __init__(self, db: SourceDatabase, rng: random.Random) -> None:
        self.db = db
        self.rng = rng

    # ---------- inserts

    def insert(self, table: Table) -> list[Change]:
        """One INSERT statement: usually one row, sometimes a few (listings, sales)."""
        count = 1
        if table in (LISTING, SALES) and self.rng.random() < _MULTI_ROW_SHARE:
            count = self.rng.randint(2, 4)
        changes = []
        for _ in range(count):
            row = self._new_row(table)
            if row is None:
                break
            changes.append(self.db.insert(table, row))
        return changes

    def _new_row(self, table: Table) -> list | None:
        db, rng = self.db, self.rng
        if table is CATEGORY:
            key = db.take_key(table)
            group, name, description = words.NEW_CATEGORIES[key % len(words.NEW_CATEGORIES)]
            return rows.category_row(key, group, name, description)
        if table is DATE:
            return rows.date_row(db.take_key(table))
        if table is VENUE:
            return rows.venue_row(rng, db.take_key(table))
        if table is USERS:
            row = rows.user_row(rng, db.take_key(table))
            if db.schema_version[USERS.name] >= 2:
                row.append(rows.new_loyalty_tier(rng))
            return row
        if table is EVENT:
            category = db.row(CATEGORY, db.pools[CATEGORY.name].choice(rng))
            venueid = db.pools[VENUE.name].choice(rng)
            dateid = db.pools[DATE.name].choice(rng)
            return rows.event_row(rng, db.take_key(table), venueid, category, dateid)
        if table is LISTING:
            event = db.row(EVENT, db.pools[EVENT.name].choice(rng))
            group = db.row(CATEGORY, event[2])[1]
            seller = db.pools[USERS.name].choice(rng)
            return rows.listing_row(rng, db.take_key(table), seller, event, group)
        return self._new_sale()

    def _new_sale(self) -> list | None:
        db, rng = self.db, self.rng
        for _ in range(_SALE_ATTEMPTS):
            listing = db.row(LISTING, db.pools[LISTING.name].choice(rng))
            remaining = db.remaining_tickets(listing)
            if remaining > 0:
                buyer = self._other_user(listing[1])
                start = db.row(EVENT, listing[2])[5]
                return rows.sale_row(rng, db.take_key(SALES), listing, buyer, start, remaining)
        return None

    def _other_user(self, *not_these: int) -> int:
        pool = self.db.pools[USERS.name]
        user = pool.choice(self.rng)
        for _ in range(16):
            if user not in not_these:
                break
            user = pool.choice(self.rng)
        return user

    # ---------- updates

    def update(self, table: Table, key: int | None = None) -> Change | None:
        """UPDATE one row (a random live one unless `key` is given and live)."""
        db = self.db
        if key is None:
            if not db.live_count(table):
                return None
            key = db.pools[table.name].choice(self.rng)
        elif key not in db.pools[table.name]:
            return None
        return db.update(table, key, self._changed_row(table, db.row(table, key)))

    def _changed_row(self, table: Table, row: list) -> list:
        db, rng = self.db, self.rng
        if table is CATEGORY:
            return rows.updated_category(rng, row)
        if table is DATE:
            return rows.updated_date(row)
        if table is VENUE:
            return rows.updated_venue(rng, row)
        if table is EVENT:
            return rows.updated_event(rng, row)
        if table is USERS:
            return rows.updated_user(rng, row, db.schema_version[USERS.name] >= 2)
        if table is LISTING:
            return rows.updated_listing(rng, row, db.is_referenced(LISTING, row[0]))
        if row[6] > 1:
            return rows.refunded_sale(row, db.row(LISTING, row[1])[5])
        return rows.transferred_sale(row, self._other_user(row[2], row[3]))

    # ---------- deletes

    def delete(self, table: Table) -> Change | None:
        """DELETE a row nothing references; an UPDATE when no such row is found."""
        db = self.db
        if table is not DATE and db.live_count(table):
            for _ in range(_DELETE_ATTEMPTS):
                key = db.pools[table.name].choice(self.rng)
                if not db.is_referenced(table, key):
                    return db.delete(table, key)
        return self.update(table)
