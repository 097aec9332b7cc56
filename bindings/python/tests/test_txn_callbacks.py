"""Callbacks that read other rows through the transaction they ask for
(``transaction=True``): books grouped, sorted and found by their author's
row, dynamic groups shown by a row of their own. The Swift
TransactionCallbackTests and the C test_txn_callbacks.c check the same
cases.

Rows: authors/A = {"country", "rank"}, books/B = {"author": A},
countries/C = rank (group C shows while the row exists).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

import ydbview
from ydbview import CallbackTransaction, MisuseError


def _author(txn: ydbview.ReadTransaction, row: ydbview.ViewRow) -> Optional[Dict[str, Any]]:
    return txn.get("authors", row.object["author"])


@ydbview.grouping(flavour="object", transaction=True)
def by_country(txn: CallbackTransaction, row: ydbview.ViewRow) -> Optional[str]:
    if row.collection != "books":
        return None
    author = _author(txn, row)
    return None if author is None else author["country"]


@ydbview.sorting(flavour="object", transaction=True)
def by_rank(txn: CallbackTransaction, group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    left, right = (_author(txn, a)["rank"], a.key), (_author(txn, b)["rank"], b.key)  # type: ignore[index]
    return (left > right) - (left < right)


@ydbview.key_sorting(flavour="object", transaction=True)
def rank_key(txn: CallbackTransaction, group: str, row: ydbview.ViewRow) -> Any:
    return (_author(txn, row)["rank"], row.key)  # type: ignore[index]


def _groups(conn: ydbview.Connection, view: str = "byAuthor") -> Dict[str, List[str]]:
    with conn.read() as t:
        v = t.view(view)
        return {group: [key for _, key in v.keys(group)] for group in v.groups}


def test_grouping_reads_rows_written_earlier_in_the_same_transaction(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    # Registration over existing rows: its transaction reads them.
    with conn.read_write() as t:
        t.set("authors", "tolstoy", {"country": "ru", "rank": 2})
        t.set("books", "war", {"author": "tolstoy"})
    json_db.register_view("byAuthor", by_country, by_rank)
    assert _groups(conn) == {"ru": ["war"]}

    with conn.read_write() as t:
        t.set("authors", "hugo", {"country": "fr", "rank": 1})
        t.set("books", "miserables", {"author": "hugo"})
        assert t.view("byAuthor").group_of("books", "miserables") == "fr"
        t.set("books", "orphan", {"author": "nobody"})  # no such author: left out
    assert _groups(conn) == {"ru": ["war"], "fr": ["miserables"]}

    # set_view_definition repopulates in the caller's transaction, reading its writes.
    with conn.read_write() as t:
        t.set("authors", "nobody", {"country": "xx", "rank": 0})
        t.set_view_definition("byAuthor", by_country, key=rank_key, version_tag="2")
    assert _groups(conn) == {"ru": ["war"], "fr": ["miserables"], "xx": ["orphan"]}


@pytest.mark.parametrize("keyed", [False, True])
def test_sorting_reads_rows(json_db: ydbview.Database, keyed: bool) -> None:
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set("authors", "a", {"country": "fr", "rank": 3})
        t.set("authors", "b", {"country": "fr", "rank": 1})
        t.set("books", "k1", {"author": "a"})
    if keyed:
        json_db.register_view("byAuthor", by_country, key=rank_key)
    else:
        json_db.register_view("byAuthor", by_country, by_rank)
    with conn.read_write() as t:
        t.set("authors", "c", {"country": "fr", "rank": 2})
        t.set("books", "k2", {"author": "b"})
        t.set("books", "k3", {"author": "c"})
    assert _groups(conn) == {"fr": ["k2", "k3", "k1"]}


def test_find_reads_rows(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    json_db.register_view("byAuthor", by_country, key=rank_key)
    with conn.read_write() as t:
        t.set("authors", "a", {"country": "fr", "rank": 1})
        t.set("authors", "b", {"country": "fr", "rank": 2})
        for book, author in [("k1", "a"), ("k2", "b"), ("k3", "b")]:
            t.set("books", book, {"author": author})

        def rank_two(txn: CallbackTransaction, row: ydbview.ViewRow) -> int:
            rank = _author(txn, row)["rank"]  # type: ignore[index]
            return (rank > 2) - (rank < 2)

        assert t.view("byAuthor").find("fr", rank_two, flavour="object", transaction=True) == range(1, 3)
    # A find may read views too (they are not being updated); a plain find gets the row alone.
    with conn.read() as t:
        assert t.view("byAuthor").find("fr", lambda txn, row: 0 if txn.view("byAuthor").count("fr") == 3 else 1,
                                       flavour="key", transaction=True) == range(0, 3)
        assert t.view("byAuthor").find("fr", lambda row: 0, flavour="key") == range(0, 3)


def test_dynamic_groups_read_rows(json_db: ydbview.Database) -> None:
    conn, ui = json_db.new_connection(), json_db.new_connection()
    json_db.register_view("byAuthor", by_country, key=rank_key)
    with conn.read_write() as t:
        for author, country in [("a", "fr"), ("b", "ru"), ("c", "de")]:
            t.set("authors", author, {"country": country, "rank": 0})
        for book, author in [("k1", "a"), ("k2", "b"), ("k3", "c")]:
            t.set("books", book, {"author": author})
        t.set("countries", "ru", 1)
        t.set("countries", "fr", 2)
    mappings = ydbview.Mappings.dynamic(lambda txn, group: txn.exists("countries", group), "byAuthor",
                                        key=lambda txn, group: txn.get("countries", group), transaction=True)
    ui.begin_long_lived_read_transaction()
    with ui.read() as t:
        mappings.update(t)
    assert mappings.all_groups == ["ru", "fr"]  # de is not listed; ru ranks first

    with conn.read_write() as t:
        t.set("countries", "de", 0)
    with conn.read_write() as t:
        t.set("books", "k4", {"author": "c"})
    notifications = ui.begin_long_lived_read_transaction()
    assert mappings.has_changes(notifications)  # without a transaction every group may show
    with pytest.raises(MisuseError):
        mappings.changes(notifications)  # these callbacks need the transaction
    assert mappings.all_groups == ["ru", "fr"]
    with ui.read() as t:
        changeset = mappings.changes(notifications, t)
    assert mappings.all_groups == ["de", "ru", "fr"]
    assert [change.group for change in changeset.section_changes] == ["de"]
    mappings.close()


def test_the_transaction_is_read_only_and_lives_for_one_call(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    kept: List[CallbackTransaction] = []
    refusals: Dict[str, str] = {}

    @ydbview.grouping(flavour="object", transaction=True)
    def group(txn: CallbackTransaction, row: ydbview.ViewRow) -> Optional[str]:
        kept.append(txn)
        if row.collection == "books" and not refusals:
            refusals["active"] = str(txn.active)
            for name, attempt in [("set", lambda: txn.set("books", "sneaky", {})),
                                  ("touch", lambda: txn.touch_object("books", "war")),
                                  ("remove", lambda: txn.remove("authors", "hugo")),
                                  ("commit", lambda: txn.commit()),
                                  ("end", lambda: txn.end()),
                                  ("view", lambda: txn.view("byAuthor"))]:
                try:
                    attempt()
                    refusals[name] = "ok"
                except MisuseError as error:  # swallowed: the write goes on
                    refusals[name] = error.message
        return by_country.fn(txn, row)

    json_db.register_view("byAuthor", group, by_rank)
    with conn.read_write() as t:
        t.set("authors", "hugo", {"country": "fr", "rank": 1})
        t.set("books", "miserables", {"author": "hugo"})
        t.set("books", "notre-dame", {"author": "hugo"})
    assert refusals["active"] == "True"
    for name in ["set", "touch", "remove", "commit", "end"]:
        assert "read-only" in refusals[name], refusals
    assert "half-updated" in refusals["view"]
    assert _groups(conn) == {"fr": ["miserables", "notre-dame"]}
    with conn.read() as t:
        assert t.get("books", "sneaky") is None

    # Kept past its call: every use raises MisuseError.
    late = kept[-1]
    assert isinstance(late, ydbview.ReadTransaction) and not isinstance(late, ydbview.ReadWriteTransaction)
    assert not late.active
    for attempt in [lambda: late.get("authors", "hugo"), lambda: late.count("books"),
                    lambda: late.set("books", "late", {}), lambda: late.end()]:
        with pytest.raises(MisuseError):
            attempt()


def test_only_callbacks_that_ask_get_the_transaction(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    seen: List[int] = []

    def plain(row: ydbview.ViewRow) -> str:
        seen.append(len([row]))
        return "all"

    json_db.register_view("plain", ydbview.Grouping(plain, flavour="key"),
                          ydbview.Sorting(lambda g, a, b: (a.key > b.key) - (a.key < b.key), flavour="key"))
    with conn.read_write() as t:
        t.set("c", "k", 1)
    assert seen == [1]
    assert not ydbview.Grouping(plain).transaction
    assert ydbview.Grouping(by_country.fn, transaction=True).transaction


def test_changing_a_row_a_callback_only_read_moves_nothing_until_touched(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    json_db.register_view("byAuthor", by_country, by_rank)
    with conn.read_write() as t:
        t.set("authors", "hugo", {"country": "fr", "rank": 1})
        t.set("books", "miserables", {"author": "hugo"})
    with conn.read_write() as t:
        t.set("authors", "hugo", {"country": "be", "rank": 1})
    assert _groups(conn) == {"fr": ["miserables"]}  # the author was only read: nothing re-ran
    with conn.read_write() as t:
        t.touch_object("books", "miserables")
    assert _groups(conn) == {"be": ["miserables"]}
