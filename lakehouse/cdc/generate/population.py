"""The TICKIT snapshot at a scale: every table's rows with realistic shape.

Cardinalities are TICKIT's at scale 1 and linear in the scale (categories and
dates fixed). Distributions are skewed the way ticket markets are: a few
events draw most listings, a few users sell and buy most tickets, events
cluster in summer and December and on weekends, and buyers buy close to the
event, so sales show the same seasonality.
"""

from __future__ import annotations

import logging
import random
from datetime import date, timedelta

from lakehouse.cdc.generate import rows
from lakehouse.cdc.generate import vocabulary as words
from lakehouse.cdc.generate.seeds import derive_rng
from lakehouse.cdc.generate.state import SourceDatabase
from lakehouse.cdc.generate.tickit import (
    CALENDAR_DAYS,
    CATEGORY,
    DATE,
    EVENT,
    FIRST_DATEID,
    LISTING,
    SALES,
    USERS,
    VENUE,
)

log = logging.getLogger(__name__)

# Exponents of the power-law picks: higher means more concentrated on a few keys.
_EVENT_POPULARITY = 1.8
_SELLER_SKEW = 2.0
_BUYER_SKEW = 2.5


class SkewedPicker:
    """Picks keys with a power-law skew; which keys are popular is itself random."""

    def __init__(self, rng: random.Random, keys: list[int], exponent: float) -> None:
        self._keys = list(keys)
        rng.shuffle(self._keys)
        self._exponent = exponent

    def pick(self, rng: random.Random) -> int:
        return self._keys[int(len(self._keys) * rng.random() ** self._exponent)]


def populate(seed: int, scale: float) -> SourceDatabase:
    """Build the source databases as they are when the connectors snapshot them."""
    db = SourceDatabase()
    db.load(CATEGORY, {c[0]: rows.category_row(*c) for c in words.CATEGORIES})
    dateids = range(FIRST_DATEID, FIRST_DATEID + CALENDAR_DAYS)
    db.load(DATE, {dateid: rows.date_row(dateid) for dateid in dateids})

    rng = derive_rng(seed, "snapshot", VENUE.name)
    db.load(VENUE, {i: rows.venue_row(rng, i) for i in range(1, VENUE.rows_at(scale) + 1)})
    rng = derive_rng(seed, "snapshot", USERS.name)
    db.load(USERS, {i: rows.user_row(rng, i) for i in range(1, USERS.rows_at(scale) + 1)})
    db.load(EVENT, _events(db, derive_rng(seed, "snapshot", EVENT.name), EVENT.rows_at(scale)))
    sellers = SkewedPicker(derive_rng(seed, "sellers"), list(db.rows[USERS.name]), _SELLER_SKEW)
    buyers = SkewedPicker(derive_rng(seed, "buyers"), list(db.rows[USERS.name]), _BUYER_SKEW)
    rng = derive_rng(seed, "snapshot", LISTING.name)
    db.load(LISTING, _listings(db, rng, LISTING.rows_at(scale), sellers))
    rng = derive_rng(seed, "snapshot", SALES.name)
    db.load(SALES, _sales(db, rng, SALES.rows_at(scale), buyers))
    log.debug("populated %s", {name: len(table) for name, table in db.rows.items()})
    return db


def date_weights(dateids: list[int]) -> list[float]:
    """How likely an event falls on each day: month seasonality, weekend boost."""
    weights = []
    for dateid in dateids:
        row = rows.date_row(dateid)
        month = (date(1970, 1, 1) + timedelta(days=row[1])).month
        weekend = 1.4 if row[2] in ("FR", "SA") else 1.0
        weights.append(words.MONTH_WEIGHTS[month - 1] * weekend)
    return weights


def _events(db: SourceDatabase, rng: random.Random, count: int) -> dict[int, list]:
    categories = db.rows[CATEGORY.name]
    catids = rng.choices(list(categories), words.CATEGORY_EVENT_WEIGHTS, k=count)
    dateids = list(db.rows[DATE.name])
    days = rng.choices(dateids, date_weights(dateids), k=count)
    venues = list(db.rows[VENUE.name])
    return {
        eventid: rows.event_row(rng, eventid, rng.choice(venues), categories[catid], dateid)
        for eventid, catid, dateid in zip(range(1, count + 1), catids, days, strict=True)
    }


def _listings(
    db: SourceDatabase, rng: random.Random, count: int, sellers: SkewedPicker
) -> dict[int, list]:
    events = db.rows[EVENT.name]
    categories = db.rows[CATEGORY.name]
    popular = SkewedPicker(rng, list(events), _EVENT_POPULARITY)
    listings = {}
    for listid in range(1, count + 1):
        event = events[popular.pick(rng)]
        group = categories[event[2]][1]
        listings[listid] = rows.listing_row(rng, listid, sellers.pick(rng), event, group)
    return listings


def _sales(
    db: SourceDatabase, rng: random.Random, count: int, buyers: SkewedPicker
) -> dict[int, list]:
    listings = db.rows[LISTING.name]
    events = db.rows[EVENT.name]
    listids = list(listings)
    sold: dict[int, int] = {}
    sales = {}
    for salesid in range(1, count + 1):
        listing = _listing_with_tickets(rng, listings, listids, sold)
        remaining = listing[4] - sold.get(listing[0], 0)
        buyer = _buyer_for(rng, buyers, listing[1])
        row = rows.sale_row(rng, salesid, listing, buyer, events[listing[2]][5], remaining)
        sold[listing[0]] = sold.get(listing[0], 0) + row[6]
        sales[salesid] = row
    return sales


def _listing_with_tickets(
    rng: random.Random, listings: dict[int, list], listids: list[int], sold: dict[int, int]
) -> list:
    for _ in range(64):
        listing = listings[listids[rng.randrange(len(listids))]]
        if listing[4] > sold.get(listing[0], 0):
            return listing
    for listid in listids:
        if listings[listid][4] > sold.get(listid, 0):
            return listings[listid]
    raise RuntimeError("every listing is sold out: too many sales for the listings")


def _buyer_for(rng: random.Random, buyers: SkewedPicker, sellerid: int) -> int:
    """A buyer other than the seller (TICKIT users do not buy their own tickets)."""
    for _ in range(16):
        buyer = buyers.pick(rng)
        if buyer != sellerid:
            return buyer
    return buyer
