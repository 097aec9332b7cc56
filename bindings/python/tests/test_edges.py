"""The engine's edges: values SQLite cannot store, one Database per file, and
a second writer on the thread that already writes."""

from __future__ import annotations

from typing import Iterator

import pytest

import ydbview

LIMIT = 4096


@pytest.fixture
def small_db(monkeypatch: pytest.MonkeyPatch) -> Iterator[ydbview.Database]:
    # Read once when the database opens: lowers SQLite's length limit so the
    # test need not allocate a gigabyte.
    monkeypatch.setenv("YDBVIEW_MAX_VALUE_BYTES", str(LIMIT))
    database = ydbview.Database()
    monkeypatch.delenv("YDBVIEW_MAX_VALUE_BYTES")
    yield database
    database.close()


def test_too_big_values_are_refused_and_nothing_changes(small_db: ydbview.Database) -> None:
    conn = small_db.new_connection()
    big = b"x" * (LIMIT + 1)
    with conn.read_write() as t:
        t.set("c", "k", b"small", b"meta")
    with conn.read_write() as t:
        with pytest.raises(ydbview.TooBigError) as caught:
            t.set("c", "k", big)
        assert str(LIMIT + 1) in caught.value.message and str(LIMIT) in caught.value.message
        assert caught.value.code == ydbview.Status.TOOBIG == 11
        with pytest.raises(ydbview.TooBigError):
            t.set("c", "new", big)
        with pytest.raises(ydbview.TooBigError):
            t.replace_object("c", "k", big)
        with pytest.raises(ydbview.TooBigError, match="metadata"):
            t.set("c", "k", b"o", big)
        with pytest.raises(ydbview.TooBigError, match="metadata"):
            t.replace_metadata("c", "k", big)
        with pytest.raises(ydbview.TooBigError):
            t.set("c", "k" * (LIMIT + 1), b"o")
        # The transaction goes on: nothing was written.
        assert t.get("c", "k") == b"small"
        t.set("c", "other", b"fits")
    with conn.read() as t:
        assert t.get("c", "k") == b"small"
        assert t.get_metadata("c", "k") == b"meta"
        assert not t.exists("c", "new")
        assert t.get("c", "other") == b"fits"
    conn.close()


def test_too_big_error_is_a_value_error() -> None:
    assert issubclass(ydbview.TooBigError, ydbview.YDBError)
    assert ydbview.errors.error_for(11, "m").__class__ is ydbview.TooBigError
