"""The lazy forms of view enumeration (``iter_keys``/``iter_rows``) agree
with the list forms for every window and direction, read a chunk at a
time, and fail the way the list forms do."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ydbview
from ydbview import ViewTransaction

ROWS = 23


@pytest.fixture(scope="module")
def conn() -> Iterator[ydbview.Connection]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.Sorting(lambda g, a, b: a.object["n"] - b.object["n"], flavour="object"))
    connection = db.new_connection()
    with connection.read_write() as t:
        for n in range(ROWS):
            t.set("c", f"k{n:02}", {"g": "g", "n": n}, metadata=n)
    yield connection
    db.close()


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ViewTransaction, "_CHUNK", 4)   # several C calls per iteration


def test_iter_keys_is_lazy_and_ordered(conn: ydbview.Connection) -> None:
    with conn.read() as t:
        it = t.view("v").iter_keys("g", start=0, stop=50)
        assert iter(it) is it
        assert next(it) == ("c", "k00")
        rest = [key for _collection, key in it]
        assert rest == [f"k{n:02}" for n in range(1, ROWS)]
        assert list(t.view("v").iter_keys("zzz")) == []


def test_iter_rows_carries_object_and_metadata(conn: ydbview.Connection) -> None:
    with conn.read() as t:
        rows = list(t.view("v").iter_rows("g", start=5, stop=7, reverse=True))
    assert rows == [ydbview.ViewRow("c", "k06", {"g": "g", "n": 6}, 6),
                    ydbview.ViewRow("c", "k05", {"g": "g", "n": 5}, 5)]


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, ROWS + 3), length=st.one_of(st.none(), st.integers(0, ROWS + 3)),
       reverse=st.booleans())
def test_iterators_match_the_lists(conn: ydbview.Connection, start: int, length: Optional[int],
                                   reverse: bool) -> None:
    stop = None if length is None else start + length
    with conn.read() as t:
        v = t.view("v")
        assert list(v.iter_keys("g", start, stop, reverse)) == v.keys("g", start, stop, reverse)
        assert list(v.iter_rows("g", start, stop, reverse)) == v.rows("g", start, stop, reverse)


def test_bad_bounds_fail_at_the_call(conn: ydbview.Connection) -> None:
    with conn.read() as t:
        with pytest.raises(ValueError):
            t.view("v").iter_keys("g", start=3, stop=1)
        with pytest.raises(ValueError):
            t.view("v").iter_rows("g", start=-1)


def test_iterating_past_the_transaction_is_misuse(conn: ydbview.Connection) -> None:
    with conn.read() as t:
        it: Any = t.view("v").iter_keys("g")
        next(it)
    next(it), next(it), next(it)        # the rest of the first chunk is already in Python
    with pytest.raises(ydbview.MisuseError):
        next(it)


def test_consumer_exception_does_not_touch_c(conn: ydbview.Connection) -> None:
    with conn.read() as t:
        with pytest.raises(KeyError):
            for _item in t.view("v").iter_keys("g"):
                raise KeyError("stop")
        assert t.view("v").count("g") == ROWS   # the transaction is still usable
