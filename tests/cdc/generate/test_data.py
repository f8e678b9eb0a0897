"""The TICKIT rows are consistent and plausibly distributed."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import date
from decimal import Decimal

import pytest

from lakehouse.cdc.generate.population import populate
from lakehouse.cdc.generate.tickit import SALES


@pytest.fixture(scope="module")
def final(generated) -> dict[str, dict[int, dict]]:
    _, landing = generated(format="json")
    from lakehouse.cdc.generate.tickit import TABLES

    return {
        name: {row[table.key]: row for row in landing.expected(name)}
        for name, table in TABLES.items()
    }


def test_commission_is_fifteen_percent_of_price_paid(final):
    for sale in final["sales"].values():
        paid = Decimal(sale["pricepaid"])
        assert Decimal(sale["commission"]) == (paid * Decimal("0.15")).quantize(Decimal("0.01"))
    assert len(final["sales"]) > 1_700


def test_listing_and_sale_prices_agree(final):
    for listing in final["listing"].values():
        price = Decimal(listing["priceperticket"])
        assert Decimal(listing["totalprice"]) == listing["numtickets"] * price
    for sale in final["sales"].values():
        if sale["_deleted"]:
            continue
        listing = final["listing"][sale["listid"]]
        assert Decimal(sale["pricepaid"]) == sale["qtysold"] * Decimal(listing["priceperticket"])
        assert sale["sellerid"] == listing["sellerid"]
        assert sale["eventid"] == listing["eventid"]


def test_sales_fall_between_listing_and_event_and_never_oversell(final):
    sold = Counter()
    for sale in final["sales"].values():
        if sale["_deleted"]:
            continue
        listing = final["listing"][sale["listid"]]
        event = final["event"][sale["eventid"]]
        assert listing["listtime"] < sale["saletime"] < event["starttime"]
        assert final["date"][sale["dateid"]]["caldate"] == sale["saletime"][:10]
        assert sale["buyerid"] != sale["sellerid"]
        sold[sale["listid"]] += sale["qtysold"]
    for listid, quantity in sold.items():
        assert quantity <= final["listing"][listid]["numtickets"]
    for listing in final["listing"].values():
        assert final["date"][listing["dateid"]]["caldate"] == listing["listtime"][:10]


def test_calendar_is_tickits(final):
    days = final["date"]
    first = [days[dateid] for dateid in range(1827, 1827 + 365)]
    assert first[0]["caldate"] == "2008-01-01" and first[0]["day"] == "TU"
    assert first[-1]["caldate"] == "2008-12-30"
    assert {d["year"] for d in first} == {2008}
    assert {d["qtr"] for d in first} == {"1", "2", "3", "4"}
    july_4 = days[1827 + (date(2008, 7, 4) - date(2008, 1, 1)).days]
    assert july_4["month"] == "JUL" and july_4["day"] == "FR"


def test_categories_are_tickits(generated):
    _, landing = generated(format="json")
    snapshot = [
        r.value["payload"]["after"]
        for r in landing.records["tickit.ems.category"]
        if r.path in landing.manifest["topics"]["tickit.ems.category"]["files"]["0"]
    ]
    assert [c["catname"] for c in snapshot] == [
        "MLB", "NHL", "NFL", "NBA", "MLS", "Musicals", "Plays", "Opera", "Pop", "Jazz", "Classical",
    ]  # fmt: skip
    assert snapshot[5]["catgroup"] == "Shows"


@pytest.fixture(scope="module")
def tenth() -> dict[str, dict[int, list]]:
    return populate(3, 0.1).rows


def test_sales_are_seasonal(tenth):
    months = Counter(row[9] // 86_400 for row in tenth[SALES.name].values())
    by_month = Counter()
    for day, count in months.items():
        by_month[date.fromordinal(719_163 + day).month] += count
    assert len(by_month) == 12
    assert max(by_month.values()) > 1.5 * min(by_month.values())
    summer = by_month[6] + by_month[7] + by_month[8]
    assert summer > by_month[1] + by_month[2] + by_month[3]


def test_buyers_and_sellers_are_skewed(tenth):
    sales = tenth["sales"].values()
    buyers = Counter(row[3] for row in sales)
    sellers = Counter(row[1] for row in tenth["listing"].values())
    users = len(tenth["users"])
    top_tenth = users // 10
    assert sum(c for _, c in buyers.most_common(top_tenth)) > 0.3 * len(sales)
    assert sum(c for _, c in sellers.most_common(top_tenth)) > 0.25 * len(tenth["listing"])


def test_manifest_checksums_are_the_expected_files(generated):
    _, landing = generated(format="json")
    for entry in landing.manifest["topics"].values():
        data = (landing.root / entry["expected"]["path"]).read_bytes()
        assert entry["expected"]["checksum"] == "sha256:" + hashlib.sha256(data).hexdigest()
        rows = data.count(b"\n")
        assert entry["expected"]["rows"] == rows
        assert entry["expected"]["deleted"] == data.count(b'"_deleted":true')


def test_expected_rows_follow_the_contract_format(final):
    sale = next(iter(final["sales"].values()))
    assert list(sale) == [
        "salesid", "listid", "sellerid", "buyerid", "eventid", "dateid",
        "qtysold", "pricepaid", "commission", "saletime", "_deleted",
    ]  # fmt: skip
    assert len(sale["saletime"]) == 19 and sale["saletime"][10] == " "
    assert sale["pricepaid"].split(".")[1].isdigit() and len(sale["pricepaid"].split(".")[1]) == 2
    keys = list(final["sales"])
    assert keys == sorted(keys)
