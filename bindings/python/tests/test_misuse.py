"""Bad input never crashes: it raises a YDBError subclass (or TypeError for
wrong Python types) and leaves nothing half-applied."""

from __future__ import annotations

import pytest

import ydbview
from ydbview import ClosedError, InvalidArgumentError, MisuseError, Status, YDBError

HOSTILE_NAMES = [
    "",
    "'",
    '"; DROP TABLE ydb_rows; --',
    "with space",
    "  padded  ",
    "Robert'); DELETE FROM x;--",
    "\u2713 check",
    "\U0001F600 emoji",
    "日本語",
    "tab\there\nnewline",
    "%s%n%x",
    "back\\slash",
    "\u00e9 vs e\u0301",
]


def test_errors_carry_code_and_message(conn: ydbview.Connection) -> None:
    t = conn.read()
    t.end()
    with pytest.raises(MisuseError) as raised:
        t.count_all()
    assert raised.value.code == Status.MISUSE
    assert "not valid" in raised.value.message
    assert isinstance(raised.value, YDBError)
    assert "MisuseError(code=2" in repr(raised.value)


def test_use_after_end_and_commit(conn: ydbview.Connection) -> None:
    t = conn.read()
    t.end()
    with pytest.raises(MisuseError):
        t.get("c", "k")
    w = conn.read_write()
    w.commit()
    with pytest.raises(MisuseError):
        w.set("c", "k", b"v")
    with pytest.raises(MisuseError):
        w.commit()
    w.rollback()  # after commit: harmless


def test_writer_inside_reader_and_nested_writer(conn: ydbview.Connection) -> None:
    with conn.read() as reader:
        with pytest.raises(MisuseError):
            conn.read_write()
        with pytest.raises(MisuseError):
            conn.read()
        with pytest.raises(MisuseError):
            conn.begin_long_lived_read_transaction()
        assert reader.get("n", "k") is None
    with conn.read_write() as writer:
        writer.set("n", "k", b"outer")
        with pytest.raises(MisuseError):
            conn.read_write()
        with pytest.raises(MisuseError):
            conn.read()
    with conn.read() as reader:
        assert reader.get("n", "k") == b"outer"


def test_closed_database_and_connection(db: ydbview.Database) -> None:
    conn = db.new_connection()
    reader = conn.read()
    conn.close()
    with pytest.raises(YDBError):
        reader.count_all()
    reader.end()
    with pytest.raises(MisuseError):
        conn.read()
    live = db.new_connection()
    db.close()
    with pytest.raises(ClosedError):
        live.read()
    with pytest.raises(MisuseError):
        db.snapshot  # noqa: B018
    with pytest.raises(MisuseError):
        db.new_connection()
    live.close()


def test_closing_the_database_ends_open_transactions() -> None:
    db = ydbview.Database()
    conn, writer_conn = db.new_connection(), db.new_connection()
    reader = conn.read()
    writer = writer_conn.read_write()
    writer.set("c", "k", b"v")
    db.close()
    with pytest.raises(ClosedError, match="its database was closed"):
        reader.count_all()
    with pytest.raises(ClosedError, match="its database was closed"):
        writer.commit()
    reader.end()
    with pytest.raises(ClosedError):
        writer_conn.read_write()
    conn.close()
    writer_conn.close()


def test_names_with_nul_are_refused_before_c(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        with pytest.raises(InvalidArgumentError, match="NUL"):
            t.set("c", "a\0b", b"v")
        with pytest.raises(InvalidArgumentError):
            t.set("c\0", "k", b"v")
        t.set("c", "a", b"kept")  # the transaction goes on
    with conn.read() as t:
        assert t.keys("c") == ["a"]


def test_invalid_utf8_is_refused_by_c(conn: ydbview.Connection) -> None:
    lone_surrogate = "bad\ud800"
    with conn.read_write() as t:
        with pytest.raises(InvalidArgumentError, match="UTF-8"):
            t.set("c", lone_surrogate, b"v")
        with pytest.raises(InvalidArgumentError):
            t.get(lone_surrogate, "k")
        with pytest.raises(InvalidArgumentError):
            t.remove_all(lone_surrogate)
        t.set("c", "ok", b"v")
    with pytest.raises(InvalidArgumentError):
        ydbview.Database("/tmp/\udcff.sqlite")
    with pytest.raises(InvalidArgumentError):
        ydbview.Database("")
    # The engine opens the file itself (to lock it) before SQLite does: a
    # clean error naming the path and the system's reason.
    with pytest.raises(ydbview.CantOpenError, match="/nonexistent/dir/x.sqlite: No such file or directory"):
        ydbview.Database("/nonexistent/dir/x.sqlite")


def test_wrong_types(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        with pytest.raises(TypeError):
            t.set("c", 1, b"v")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            t.set(b"c", "k", b"v")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            t.set("c", "k", "not bytes")  # default BytesSerializer
        t.set("c", "k", b"v")
    with conn.read() as t:
        assert t.count_all() == 1


def test_remove_many_with_a_bad_key_removes_nothing(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        t.set("half", "h1", b"1")
        t.set("half", "h2", b"2")
    with conn.read_write() as t:
        with pytest.raises(InvalidArgumentError):
            t.remove_many("half", ["h1", "bad\ud800", "h2"])
        with pytest.raises(InvalidArgumentError):
            t.remove_many("half", ["h1", "nul\0"])
        assert t.count("half") == 2
    with conn.read() as t:
        assert t.keys("half") == ["h1", "h2"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_data(conn: ydbview.Connection, name: str) -> None:
    with conn.read_write() as t:
        t.set(name, name, name.encode(), metadata=name.encode())
        t.set("plain", name, b"x")
    with conn.read() as t:
        assert t.get_row(name, name) == (name.encode(), name.encode())
        assert name in t.collections()
        assert t.keys(name) == [name]
        assert name in t.keys("plain")
    with conn.read_write() as t:
        t.remove_all(name)
    with conn.read() as t:
        assert t.count(name) == 0


def test_huge_blob(conn: ydbview.Connection) -> None:
    blob = bytes(range(256)) * (16 * 1024 * 1024 // 256)
    with conn.read_write() as t:
        t.set("huge", "blob", blob, metadata=blob[:1024])
    with conn.read() as t:
        assert t.get("huge", "blob") == blob
        assert t.get_metadata("huge", "blob") == blob[:1024]


def test_exception_in_enumeration_is_reraised(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        for key in "abc":
            t.set("c", key, b"v")
    calls: list = []

    def explode(key: str) -> None:
        calls.append(key)
        raise KeyError(key)

    with conn.read() as t:
        with pytest.raises(KeyError):
            t.enumerate_keys("c", explode)
        assert calls == ["a"]  # stopped at once
        assert t.count("c") == 3  # the transaction is fine
