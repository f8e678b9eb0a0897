"""How one TICKIT row is made and how it plausibly changes.

Each function takes its random source and the parent rows it depends on, so
the same code makes the snapshot and the change batches, and every rule
(commission = 15% of price paid, a sale after its listing and before its
event, ...) lives in exactly one place.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from lakehouse.cdc.generate import vocabulary as words
from lakehouse.cdc.generate.tickit import FIRST_DATEID, FIRST_DAY, SECONDS_PER_DAY

_EPOCH = date(1970, 1, 1)
_DAY_NAMES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
# Event start times (seconds after midnight) and how often each occurs: evenings dominate.
_START_TIMES = (14 * 3600, 15 * 3600, 19 * 3600, 19 * 3600 + 1800, 20 * 3600, 20 * 3600 + 1800)
_START_WEIGHTS = (1, 1, 3, 4, 4, 2)
_LISTING_WINDOW_DAYS = 120
COMMISSION_PERCENT = 15


def commission_of(pricepaid_cents: int) -> int:
    """TICKIT's commission: 15% of the price paid (prices are whole dollars, so exact)."""
    return (pricepaid_cents * COMMISSION_PERCENT + 50) // 100


def dateid_of_day(day: int) -> int:
    """The TICKIT dateid of a day counted from 1970-01-01."""
    return FIRST_DATEID + day - FIRST_DAY


def day_of_dateid(dateid: int) -> int:
    return FIRST_DAY + dateid - FIRST_DATEID


# ---------- category


def category_row(catid: int, group: str, name: str, description: str) -> list:
    return [catid, group, name, description]


def updated_category(rng: random.Random, row: list) -> list:
    """A reworded description, still within varchar(50)."""
    suffix = rng.choice((" (regional)", " and more", " (all ages)", " (season)"))
    base = row[3].split(" (")[0].removesuffix(" and more")
    return [*row[:3], (base + suffix)[:50]]


# ---------- date


def date_row(dateid: int) -> list:
    """The calendar facts of a TICKIT date (day as TICKIT writes it: MO, TU, ...)."""
    day = day_of_dateid(dateid)
    when = _EPOCH + timedelta(days=day)
    week = int(when.strftime("%U")) + 1
    holiday = (when.month, when.day) in words.HOLIDAYS_2008 and when.year == 2008
    return [
        dateid,
        day,
        _DAY_NAMES[when.weekday()],
        week,
        _MONTHS[when.month - 1],
        str((when.month - 1) // 3 + 1),
        when.year,
        holiday,
    ]


def updated_date(row: list) -> list:
    """A holiday flag corrected (the only thing that changes about a day)."""
    return [*row[:7], not row[7]]


# ---------- venue


def venue_row(rng: random.Random, venueid: int) -> list:
    kind = rng.choice(words.VENUE_KINDS)
    city, state = rng.choice(words.CITIES)
    low, high = words.VENUE_SEATS[kind]
    seats = 0 if rng.random() < 0.25 else rng.randrange(low, high, 100)
    return [venueid, f"{rng.choice(words.VENUE_SPONSORS)} {kind}", city, state, seats]


def updated_venue(rng: random.Random, row: list) -> list:
    """A sponsor renames the venue, or a renovation changes its capacity."""
    if rng.random() < 0.5:
        kind = row[1].split(" ", 1)[-1] if " " in row[1] else row[1]
        return [row[0], f"{rng.choice(words.VENUE_SPONSORS)} {kind}", *row[2:]]
    seats = row[4] or 1000
    return [*row[:4], max(0, seats + rng.randrange(-2000, 4000, 100))]


# ---------- event


def event_name(rng: random.Random, catid: int, group: str) -> str:
    """A performer or show name that fits the category."""
    if catid == 6:
        return rng.choice(words.MUSICALS)
    if catid == 7:
        return rng.choice(words.PLAYS)
    if catid == 8:
        return rng.choice(words.OPERAS)
    if catid == 10:
        return f"{rng.choice(words.JAZZ_LEADERS)} {rng.choice(words.JAZZ_FORMS)}"
    if catid == 11:
        return rng.choice(words.CLASSICAL_WORKS)
    if group == "Sports":
        home, away = rng.sample(words.TEAM_CITIES, 2)
        return f"{home} {rng.choice(words.TEAM_NAMES)} vs {away} {rng.choice(words.TEAM_NAMES)}"
    if group == "Shows":
        return rng.choice(words.PLAYS)
    article = "The " if rng.random() < 0.5 else ""
    return f"{article}{rng.choice(words.BAND_WORDS_1)} {rng.choice(words.BAND_WORDS_2)}"


def event_row(rng: random.Random, eventid: int, venueid: int, category: list, dateid: int) -> list:
    start = day_of_dateid(dateid) * SECONDS_PER_DAY
    start += rng.choices(_START_TIMES, _START_WEIGHTS)[0]
    return [eventid, venueid, category[0], dateid, event_name(rng, category[0], category[1]), start]


def updated_event(rng: random.Random, row: list) -> list:
    """Rescheduled half an hour later the same evening, or renamed once that is late."""
    start = row[5]
    if start % SECONDS_PER_DAY < 22 * 3600:
        return [*row[:5], start + 1800]
    return [*row[:4], (row[4] + " (Encore)")[:200], start]


def price_range(group: str) -> tuple[int, int]:
    return words.PRICE_RANGES.get(group, (20, 500))


# ---------- users


def user_row(rng: random.Random, userid: int) -> list:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    username = (
        "".join(rng.choices(letters, k=3))
        + f"{rng.randrange(100):02d}"
        + "".join(rng.choices(letters, k=3))
    )
    city, state = rng.choice(words.CITIES)
    return [
        userid,
        username,
        rng.choice(words.FIRST_NAMES),
        rng.choice(words.LAST_NAMES),
        city,
        state,
        _email(rng),
        _phone(rng),
        *(_preference(rng) for _ in range(10)),
    ]


def _email(rng: random.Random) -> str:
    user = ".".join(rng.choices(words.LOREM, k=rng.randint(1, 3)))
    host = "".join(rng.choices(words.LOREM, k=rng.randint(1, 2)))
    return f"{user}@{host}.{rng.choice(words.EMAIL_DOMAINS)}"[:100]


def _phone(rng: random.Random) -> str:
    area, exchange, line = rng.randrange(200, 1000), rng.randrange(200, 1000), rng.randrange(10000)
    return f"({area:03d}) {exchange:03d}-{line:04d}"


def _preference(rng: random.Random) -> bool | None:
    draw = rng.random()
    if draw < 0.35:
        return None
    return draw < 0.70


def updated_user(rng: random.Random, row: list, with_loyalty: bool) -> list:
    """A move, a new e-mail or phone, a changed taste; a loyalty tier once it exists."""
    new = list(row)
    what = rng.randrange(4)
    if what == 0:
        new[4], new[5] = rng.choice(words.CITIES)
    elif what == 1:
        new[6] = _email(rng)
    elif what == 2:
        new[7] = _phone(rng)
    else:
        index = 8 + rng.randrange(10)
        new[index] = not new[index] if new[index] is not None else rng.random() < 0.5
    if with_loyalty:
        new[18] = rng.choice(words.LOYALTY_TIERS)
    return new


def new_loyalty_tier(rng: random.Random) -> str | None:
    """The tier of a user created after the column exists: most get one."""
    return rng.choice(words.LOYALTY_TIERS) if rng.random() < 0.8 else None


# ---------- listing


def listing_row(rng: random.Random, listid: int, sellerid: int, event: list, group: str) -> list:
    """Listed 1 to 120 days before the event (never before the calendar starts)."""
    start = event[5]
    earliest = max(FIRST_DAY * SECONDS_PER_DAY, start - _LISTING_WINDOW_DAYS * SECONDS_PER_DAY)
    listtime = rng.randint(earliest, start - 3 * 3600)
    low, high = price_range(group)
    dollars = int(low + (high - low) * rng.random() ** 3)
    numtickets = rng.choices(range(1, 31), _TICKET_WEIGHTS)[0]
    price = dollars * 100
    return [
        listid,
        sellerid,
        event[0],
        dateid_of_day(listtime // SECONDS_PER_DAY),
        numtickets,
        price,
        numtickets * price,
        listtime,
    ]


_TICKET_WEIGHTS = tuple(30 if n <= 4 else (12 if n <= 10 else 3) for n in range(1, 31))


def updated_listing(rng: random.Random, row: list, has_sales: bool) -> list:
    """More tickets on a listing that sells; a price cut on one that does not."""
    if has_sales:
        numtickets = min(32_767, row[4] + rng.randint(1, 4))
        return [*row[:4], numtickets, row[5], numtickets * row[5], row[7]]
    price = max(1000, (row[5] * 9 // 10) // 100 * 100)
    return [*row[:5], price, row[4] * price, row[7]]


# ---------- sales


def sale_row(
    rng: random.Random,
    salesid: int,
    listing: list,
    buyerid: int,
    event_start: int,
    remaining: int,
) -> list:
    """A sale between its listing and one hour before the event; buyers buy late."""
    low = listing[7] + 60
    high = event_start - 3600
    saletime = low + int((high - low) * rng.random() ** 0.6)
    qtysold = min(remaining, rng.choices((1, 2, 3, 4, 5, 6, 7, 8), (30, 35, 12, 12, 4, 3, 2, 2))[0])
    pricepaid = qtysold * listing[5]
    return [
        salesid,
        listing[0],
        listing[1],
        buyerid,
        listing[2],
        dateid_of_day(saletime // SECONDS_PER_DAY),
        qtysold,
        pricepaid,
        commission_of(pricepaid),
        saletime,
    ]


def refunded_sale(row: list, priceperticket: int) -> list:
    """One ticket of the sale refunded: quantity, price paid and commission go down."""
    qtysold = row[6] - 1
    pricepaid = qtysold * priceperticket
    return [*row[:6], qtysold, pricepaid, commission_of(pricepaid), row[9]]


def transferred_sale(row: list, buyerid: int) -> list:
    """The tickets of a one-ticket sale passed to another buyer."""
    return [*row[:3], buyerid, *row[4:]]
