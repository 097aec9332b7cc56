"""Full-text indexes through the Python package: registration and its
outcomes, maintenance across writes and rollbacks, ranking and limits,
snippets, persistence and staleness (also from a plain sqlite3 client),
callback errors coming back as raised, a name shared with a view, and a
small random history against a search done in Python."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

import ydbview
from ydbview import RegistrationOutcome
from ydbview._callbacks import live as live_callbacks


class Calls:
    def __init__(self) -> None:
        self.count = 0


def note_text(calls: Calls) -> Any:
    def extract(row: ydbview.ViewRow) -> Optional[Dict[str, str]]:
        calls.count += 1
        if row.object.get("hidden"):
            return None
        return {"title": row.object["title"], "body": row.object.get("body", "")}
    return extract


def register(db: ydbview.Database, calls: Optional[Calls] = None, tag: str = "1", **options: Any) -> RegistrationOutcome:
    return db.register_fts_index("notes", ["title", "body"], note_text(calls or Calls()), version_tag=tag,
                                 flavour="object", **options)


def keys(txn: ydbview.ReadTransaction, query: str, index: str = "notes") -> List[str]:
    return [match.key for match in txn.search(index, query)]


def test_the_index_follows_writes_and_rollbacks(json_db: ydbview.Database) -> None:
    calls = Calls()
    assert register(json_db, calls) == RegistrationOutcome.BUILT
    assert json_db.registered_fts_indexes == ["notes"]
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set("notes", "a", {"title": "Swift and SQLite", "body": "full text search"})
        t.set("notes", "b", {"title": "Bread", "body": "baking with swift hands"})
        t.set("notes", "c", {"title": "secret", "hidden": True})
        assert set(keys(t, "swift")) == {"a", "b"}   # its own writes
    assert calls.count == 3
    with conn.read() as t:
        matches = t.search("notes", "swift")
        assert {m.key for m in matches} == {"a", "b"}
        assert all(isinstance(m, ydbview.Match) and m.collection == "notes" for m in matches)
        assert [m.rank for m in matches] == sorted(m.rank for m in matches)
        assert keys(t, "title: swift") == ["a"]
        assert keys(t, "secret") == []
        assert t.search("notes", "swift", limit=1) == matches[:1]
        assert t.search("notes", "swift", limit=0) == []
        assert t.search("notes", "   ") == []
    with conn.read_write() as t:
        t.set("notes", "a", {"title": "Kotlin"})
        t.remove("notes", "b")
    with conn.read() as t:
        assert keys(t, "swift") == []
        assert keys(t, "kotlin") == ["a"]
    with pytest.raises(RuntimeError):
        with conn.read_write() as t:
            t.set("notes", "d", {"title": "ephemeral"})
            assert keys(t, "ephemeral") == ["d"]
            raise RuntimeError("roll it back")
    with conn.read() as t:
        assert keys(t, "ephemeral") == []
    with conn.read_write() as t:
        t.remove_all("notes")
    with conn.read() as t:
        assert keys(t, "kotlin") == []


def test_snippets(json_db: ydbview.Database) -> None:
    register(json_db)
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set("notes", "a", {"title": "Release notes", "body": "the quick brown fox jumps over the lazy dog"})
    with conn.read() as t:
        assert t.snippet("notes", "fox", "notes", "a", column="body", before="[", after="]", ellipsis="...",
                         tokens=4) == "the quick brown [fox]..."
        assert t.snippet("notes", "release", "notes", "a") == "<b>Release</b> notes"
        assert t.snippet("notes", "cat", "notes", "a") is None
        assert t.snippet("notes", "fox", "notes", "nosuch") is None
        with pytest.raises(ydbview.InvalidArgumentError):
            t.snippet("notes", "fox", "notes", "a", column="nosuch")
        with pytest.raises(ydbview.InvalidArgumentError):
            t.snippet("notes", "fox", "notes", "a", tokens=0)


def test_bad_queries_and_unknown_names(json_db: ydbview.Database) -> None:
    register(json_db)
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set("notes", "a", {"title": "words"})
    with conn.read() as t:
        for bad in ["AND", '"open', "nosuch: words", "(words"]:
            with pytest.raises(ydbview.InvalidArgumentError, match="invalid full-text query"):
                t.search("notes", bad)
        with pytest.raises(ydbview.NotFoundError):
            t.search("nosuch", "words")
        with pytest.raises(ydbview.InvalidArgumentError):
            t.search("notes", "a\0b")
        with pytest.raises(ValueError):
            t.search("notes", "words", limit=-1)
        assert keys(t, "words") == ["a"]   # the transaction still works


def test_definitions_are_checked(db: ydbview.Database) -> None:
    before = live_callbacks()
    extract = note_text(Calls())
    for columns, tokenizer in [([], None), (["a", "A"], None), (["has space"], None), (["rank"], None),
                               (["ok"], 'unicode61"); DROP TABLE ydb_rows; --'), (["ok"], "nosuch")]:
        with pytest.raises(ydbview.InvalidArgumentError):
            db.register_fts_index("bad", columns, extract, tokenizer=tokenizer)
    with pytest.raises(TypeError):
        db.register_fts_index("bad", "title", extract)
    with pytest.raises(TypeError):
        db.register_fts_index("bad", ["title"], "not callable")
    assert db.registered_fts_indexes == []
    assert live_callbacks() == before   # every refused callback was released
    assert db.register_fts_index("stems", ["text"], lambda row: {"text": row.key},
                                 tokenizer="porter unicode61") == RegistrationOutcome.BUILT


def test_callback_errors_are_raised_as_they_were(json_db: ydbview.Database) -> None:
    conn = json_db.new_connection()

    def fussy(row: ydbview.ViewRow) -> Any:
        if row.key == "boom":
            raise LookupError("no text for this row")
        if row.key == "typo":
            return {"titel": "x"}
        if row.key == "number":
            return {"title": 5}
        if row.key == "list":
            return ["title"]
        if row.key == "nul":
            return {"title": "a\0b"}
        return {"title": "fine"}

    json_db.register_fts_index("fussy", ["title"], fussy, allowed_collections=["c"])
    for key, error in [("boom", LookupError), ("typo", KeyError), ("number", TypeError), ("list", TypeError),
                       ("nul", ydbview.InvalidArgumentError)]:
        with pytest.raises(error):
            with conn.read_write() as t:
                t.set("c", key, {})
    with conn.read() as t:
        assert t.count("c") == 0
    with conn.read_write() as t:
        t.set("elsewhere", "boom", {})   # not fussy's collection
    with pytest.raises(LookupError):
        json_db.register_fts_index("later", ["title"], lambda row: fussy(row) if row.key == "boom" else None)
    assert "later" not in json_db.registered_fts_indexes


def test_a_callback_reads_through_its_transaction(json_db: ydbview.Database) -> None:
    def by_author(txn: ydbview.CallbackTransaction, row: ydbview.ViewRow) -> Optional[Dict[str, str]]:
        author = txn.get("authors", row.object["author"])
        return None if author is None else {"author": author["name"]}

    json_db.register_fts_index("books", ["author"], by_author, flavour="object", transaction=True,
                               allowed_collections=["books"])
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set("authors", "ulg", {"name": "Ursula Le Guin"})
        t.set("books", "earthsea", {"author": "ulg"})
    with conn.read() as t:
        assert keys(t, "guin", index="books") == ["earthsea"]


def test_views_and_indexes_share_one_namespace(db: ydbview.Database) -> None:
    db.register_view("taken", lambda row: "g", lambda group, a, b: 0)
    with pytest.raises(ydbview.InvalidArgumentError, match="belongs to a view"):
        db.register_fts_index("taken", ["text"], lambda row: None)
    db.register_fts_index("mine", ["text"], lambda row: None)
    with pytest.raises(ydbview.InvalidArgumentError, match="belongs to a full-text index"):
        db.register_view("mine", lambda row: "g", lambda group, a, b: 0)
    assert db.registered_views == ["taken"]
    assert db.registered_fts_indexes == ["mine"]
    db.unregister_fts_index("mine")
    assert db.registered_fts_indexes == []


def test_stored_indexes_load_rebuild_and_go_stale(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        assert register(db) == RegistrationOutcome.BUILT
        with db.new_connection().read_write() as t:
            t.set("notes", "a", {"title": "stored words"})
    calls = Calls()
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        assert register(db, calls) == RegistrationOutcome.LOADED
        assert calls.count == 0
        with db.new_connection().read() as t:
            assert keys(t, "stored") == ["a"]
        assert register(db, calls, tag="2") == RegistrationOutcome.REBUILT_NEW_TAG
        assert calls.count == 1
    # Written while the index was not registered: by this library, then by
    # a plain sqlite3 client.
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        with db.new_connection().read_write() as t:
            t.set("notes", "b", {"title": "missed words"})
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        assert register(db, tag="2") == RegistrationOutcome.REBUILT_STALE
    plain = sqlite3.connect(path)
    plain.execute("INSERT INTO ydb_rows (rowid, collection, key, object) VALUES (100, 'notes', 'c', ?)",
                  (b'{"title": "outside words"}',))
    plain.commit()
    plain.close()
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        assert register(db, tag="2") == RegistrationOutcome.REBUILT_STALE
        with db.new_connection().read() as t:
            assert sorted(keys(t, "words")) == ["a", "b", "c"]
        db.unregister_fts_index("notes")
    tables = {name for (name,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert not any(re.fullmatch(r"ydb_fts_\d+.*", name) for name in tables)


# ---------------------------------------------------------------------------
# A random history against a search done in Python
# ---------------------------------------------------------------------------

WORDS = ["apple", "apricot", "banana", "cherry", "date", "fig", "grape", "kiwi", "lemon", "mango"]


def tokens(text: str) -> List[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def expected(rows: Dict[str, Dict[str, str]], words: Tuple[str, ...], column: Optional[str]) -> Set[str]:
    """Rows holding every word of ``words`` (in ``column``, or any column)."""
    found = set()
    for key, texts in rows.items():
        columns = [texts[column]] if column else list(texts.values())
        if all(any(word in tokens(text) for text in columns) for word in words):
            found.add(key)
    return found


def test_random_history_matches_a_python_search(json_db: ydbview.Database) -> None:
    generator = random.Random(41)
    register(json_db)
    conn = json_db.new_connection()
    model: Dict[str, Dict[str, str]] = {}

    def text(most: int) -> str:
        return " ".join(generator.choice(WORDS).capitalize() if generator.random() < 0.3 else generator.choice(WORDS)
                        for _ in range(generator.randint(1, most)))

    for step in range(60):
        working = dict(model)
        with conn.read_write() as t:
            for _ in range(generator.randint(1, 5)):
                key = f"k{generator.randrange(40)}"
                if generator.random() < 0.7:
                    texts = {"title": text(2), "body": text(6)}
                    t.set("notes", key, texts)
                    working[key] = texts
                else:
                    t.remove("notes", key)
                    working.pop(key, None)
            rolled_back = generator.random() < 0.1
            if rolled_back:
                t.rollback()
        if not rolled_back:
            model = working
        with conn.read() as t:
            for _ in range(5):
                words = tuple(generator.sample(WORDS, generator.randint(1, 2)))
                column = generator.choice([None, "title", "body"])
                query = " ".join(f"{column}: {word}" if column else word for word in words)
                found = t.search("notes", query)
                assert {m.key for m in found} == expected(model, words, column), (step, query)
                assert [m.rank for m in found] == sorted(m.rank for m in found)
