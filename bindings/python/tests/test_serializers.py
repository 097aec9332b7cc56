"""Serializers for objects and metadata, per database and per connection."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

import ydbview
from ydbview import BytesSerializer, JSONSerializer, PickleSerializer


def test_bytes_serializer_is_the_default(conn: ydbview.Connection) -> None:
    assert isinstance(conn.serializer, BytesSerializer)
    with conn.read_write() as t:
        t.set("c", "k", memoryview(b"view"), metadata=bytearray(b"m"))
    with conn.read() as t:
        assert t.get_row("c", "k") == (b"view", b"m")


def test_json_serializer(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    value = {"title": "Dune", "tags": ["sf", "classic"], "rank": 1, "ok": True, "none": None,
             "text": "日本 \U0001F600"}
    with conn.read_write() as t:
        t.set("books", "b1", value, metadata={"genre": "sf"})
        t.set("books", "list", [1, 2, 3])
    with conn.read() as t:
        assert t.get("books", "b1") == value
        assert t.get_metadata("books", "b1") == {"genre": "sf"}
        assert t.rows("books")[1] == ("list", [1, 2, 3], None)
    with json_db.new_connection(serializer=BytesSerializer()) as raw, raw.read() as t:
        assert json.loads(t.get("books", "b1")) == value
    conn.close()


def test_pickle_serializer_with_json_metadata() -> None:
    with ydbview.Database(serializer=PickleSerializer(),
                          metadata_serializer=JSONSerializer()) as db:
        conn = db.new_connection()
        when = datetime.date(2024, 1, 2)
        with conn.read_write() as t:
            t.set("c", "k", {"when": when, "set": {1, 2}}, metadata={"n": 1})
        with conn.read() as t:
            assert t.get("c", "k") == {"when": when, "set": {1, 2}}
            assert t.get_metadata("c", "k") == {"n": 1}
        with db.new_connection(serializer=BytesSerializer()) as raw, raw.read() as t:
            assert t.get_metadata("c", "k") == b'{"n":1}'
        conn.close()


def test_connection_overrides_database_serializer(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection(serializer=PickleSerializer())
    assert isinstance(conn.serializer, PickleSerializer)
    assert isinstance(conn.metadata_serializer, PickleSerializer)
    inherited = json_db.new_connection()
    assert isinstance(inherited.metadata_serializer, JSONSerializer)
    conn.close()
    inherited.close()


class Upper:
    """A custom serializer: anything with serialize/deserialize works."""

    def serialize(self, value: Any) -> bytes:
        return str(value).upper().encode()

    def deserialize(self, data: bytes) -> Any:
        return data.decode().lower()


def test_custom_serializer() -> None:
    assert isinstance(Upper(), ydbview.Serializer)
    with ydbview.Database(serializer=Upper()) as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            t.set("c", "k", "Hello")
        with conn.read() as t:
            assert t.get("c", "k") == "hello"
        conn.close()


def test_serializer_failure_writes_nothing(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()
    with conn.read_write() as t:
        with pytest.raises(TypeError):
            t.set("c", "k", object())
        t.set("c", "ok", 1)
    with conn.read() as t:
        assert t.keys("c") == ["ok"]
    conn.close()
