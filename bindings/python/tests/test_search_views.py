"""Search views through the Python package: registration, queries set in a
transaction giving exactly the rows entering and leaving, commits moving
rows in and out, re-sorts of the parent, refusals, background searches
(superseded queries, callbacks kept alive and called once on the search's
thread, errors), closing with searches pending, the asyncio form, the
API's types under mypy and pyright, a random-history property test whose
every changeset is checked as an edit script, and typing one character at a
time into a search view over 100,000 rows while another connection commits.

Rows are {"g": group, "n": rank} objects whose metadata is their words,
which the full-text index reads; what a query must find is computed here
from the words (queries are "", "word" and "prefix*")."""

from __future__ import annotations

import asyncio
import gc
import random
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

import ydbview
import ydbview.aio
from list_histories import DYNAMIC, GROUPS, mappings_table, random_configuration
from test_edit_script import apply_steps
from test_step_types import mypy, needs_mypy, needs_pyright, pyright
from ydbview import BackgroundSearch, ChangeType, Mappings, RegistrationOutcome
from ydbview._callbacks import live as live_callbacks

WORDS = ["apple", "apricot", "banana", "blueberry", "cherry", "coconut", "date", "dragonfruit"]
RowName = Tuple[str, str]
Table = Tuple[List[str], List[List[RowName]]]


def matches(text: str, query: str) -> bool:
    """What FTS5 finds for the queries used here: nothing for a blank one,
    a word starting with the prefix for "prefix*", else the word itself."""
    query = query.strip().lower()
    if not query:
        return False
    words = text.split()
    if query.endswith("*"):
        return any(word.startswith(query[:-1]) for word in words)
    return query in words


def by_group(row: ydbview.ViewRow) -> str:
    return str(row.object["g"])


def by_rank(group: str, row: ydbview.ViewRow) -> Any:
    return (row.object["n"], row.key)


def body_text(row: ydbview.ViewRow) -> Optional[Dict[str, str]]:
    return None if row.metadata is None else {"body": row.metadata}


def new_database() -> ydbview.Database:
    """View "v" of collection "c" (grouped by "g", sorted by "n" then key)
    and full-text index "text" over each row's metadata."""
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", ydbview.Grouping(by_group, flavour="object"), ydbview.KeySorting(by_rank, flavour="object"),
                     persistent=False)
    db.register_fts_index("text", ["body"], body_text, flavour="metadata", version_tag="1")
    return db


@pytest.fixture
def db() -> Iterator[ydbview.Database]:
    database = new_database()
    yield database
    database.close()


def put(conn: ydbview.Connection, key: str, group: str, rank: int, words: str) -> None:
    with conn.read_write() as t:
        t.set("c", key, {"g": group, "n": rank}, words)


def shown(conn: ydbview.Connection, view: str = "found") -> Dict[str, List[str]]:
    """Each non-empty group of ``view`` and its keys, in order."""
    with conn.read() as t:
        v = t.view(view)
        return {group: [key for _, key in v.keys(group)] for group in v.groups}


def expected(conn: ydbview.Connection, query: str, parent: str = "v") -> Dict[str, List[str]]:
    """A search from scratch: the parent's rows, in its order, whose words match."""
    found: Dict[str, List[str]] = {}
    with conn.read() as t:
        v = t.view(parent)
        for group in v.groups:
            keys = [row.key for row in v.rows(group) if matches(row.metadata or "", query)]
            if keys:
                found[group] = keys
    return found


def read_table(db: ydbview.Database, m: Mappings) -> Table:
    shown_table = mappings_table(db, m, "found")
    return [group for group, _ in shown_table], [rows for _, rows in shown_table]


def start(conn: ydbview.Connection, m: Mappings) -> None:
    conn.begin_long_lived_read_transaction()
    with conn.read() as t:
        m.update(t)


# ---------------------------------------------------------------------------
# Queries in transactions
# ---------------------------------------------------------------------------

def test_queries_set_in_transactions_give_exactly_the_rows_entering_and_leaving(db: ydbview.Database) -> None:
    conn, ui = db.new_connection(), db.new_connection()
    put(conn, "k0", "a", 0, "apple banana")
    put(conn, "k1", "a", 1, "apricot")
    put(conn, "k2", "b", 2, "banana")
    put(conn, "k3", "b", 3, "apple")
    assert db.register_search_view("found", "v", "text", "apple") == RegistrationOutcome.BUILT
    assert "found" in db.registered_views
    assert shown(conn) == {"a": ["k0"], "b": ["k3"]}
    m = Mappings(["a", "b"], "found")
    start(ui, m)
    old = read_table(db, m)

    with conn.read_write() as t:
        t.set_search_query("found", "ap*")
        assert t.search_query("found") == "ap*"   # its own write
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    assert [(c.type, c.key, c.new_index_path) for c in changeset.row_changes] == [(ChangeType.INSERT, "k1", (0, 1))]
    new = read_table(db, m)
    assert apply_steps(changeset.steps(), old, new) == new
    with ui.read() as t:
        assert t.search_query("found") == "ap*"

    # Commits that change a row's words move it in and out.
    old = new
    put(conn, "k2", "b", 2, "apricot jam")
    put(conn, "k0", "a", 0, "cherry")
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    assert sorted((c.type.name, c.key) for c in changeset.row_changes) == [("DELETE", "k0"), ("INSERT", "k2")]
    new = read_table(db, m)
    assert apply_steps(changeset.steps(), old, new) == new
    assert shown(conn) == expected(conn, "ap*") == {"a": ["k1"], "b": ["k2", "k3"]}

    # The same query commits nothing; a rolled-back one leaves the old query.
    before = db.snapshot
    with conn.read_write() as t:
        t.set_search_query("found", "ap*")
    assert db.snapshot == before
    with pytest.raises(RuntimeError):
        with conn.read_write() as t:
            t.set_search_query("found", "cherry")
            assert t.view("found").count() == 1
            raise RuntimeError("roll back")
    with conn.read() as t:
        assert t.search_query("found") == "ap*"

    # A blank query matches nothing.
    with conn.read_write() as t:
        t.set_search_query("found", "  ")
    assert shown(conn) == {}


def test_a_resorted_parent_moves_the_results(db: ydbview.Database) -> None:
    conn, ui = db.new_connection(), db.new_connection()
    with conn.read_write() as t:
        for n in range(8):
            t.set("c", f"k{n}", {"g": "ab"[n % 2], "n": n}, WORDS[n])
    db.register_search_view("found", "v", "text", "a* OR b* OR c*")
    m = Mappings(["a", "b"], "found")
    start(ui, m)
    old = read_table(db, m)
    with conn.read_write() as t:
        t.set_view_definition("v", ydbview.Grouping(by_group, flavour="object"),
                              ydbview.KeySorting(lambda group, row: -row.object["n"], flavour="object"),
                              version_tag="descending")
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    new = read_table(db, m)
    assert {c.type for c in changeset.row_changes} == {ChangeType.MOVE}
    assert apply_steps(changeset.steps(), old, new) == new
    assert shown(conn) == {"a": ["k4", "k2", "k0"], "b": ["k5", "k3", "k1"]}
    # Unregistering the parent takes the search view with it.
    db.unregister_view("v")
    assert "found" not in db.registered_views


def test_ordered_by_rank(db: ydbview.Database) -> None:
    """order="rank": each group's matches by bm25 rank, best first, as the
    index ranks them right after the query is set; every changeset is a
    valid edit script."""
    conn, ui = db.new_connection(), db.new_connection()
    rng = random.Random(5)
    with conn.read_write() as t:
        for i in range(120):
            t.set("c", f"k{i:03d}", {"g": "ab"[i % 2], "n": i}, " ".join(rng.choices(WORDS, k=rng.randint(1, 6))))
    db.register_search_view("best", "v", "text", "apple", order="rank")
    with pytest.raises(ValueError):
        db.register_search_view("worst", "v", "text", "apple", order="worst")
    m = Mappings(["a", "b"], "best")
    start(ui, m)

    def table() -> Table:
        shown_table = mappings_table(db, m, "best")
        return [group for group, _ in shown_table], [rows for _, rows in shown_table]

    for query in ["apple", "apple OR banana", "banana", "b*"]:
        old = table()
        if query != "apple":
            with conn.read_write() as t:
                t.set_search_query("best", query)
        changeset = m.changes(ui.begin_long_lived_read_transaction())
        new = table()
        assert apply_steps(changeset.steps(), old, new) == new
        with conn.read() as t:
            rank = {match.key: match.rank for match in t.search("text", query)}
        got = shown(conn, "best")
        assert sorted(key for keys in got.values() for key in keys) == sorted(rank)
        for keys in got.values():
            assert [rank[key] for key in keys] == sorted(rank[key] for key in keys), query


def test_refusals(db: ydbview.Database) -> None:
    conn = db.new_connection()
    put(conn, "k0", "a", 0, "apple")
    with pytest.raises(ydbview.NotFoundError):
        db.register_search_view("found", "nosuch", "text")
    with pytest.raises(ydbview.NotFoundError):
        db.register_search_view("found", "v", "nosuch")
    with pytest.raises(ydbview.InvalidArgumentError, match="invalid full-text query"):
        db.register_search_view("found", "v", "text", "apple AND")
    with pytest.raises(ydbview.InvalidArgumentError):
        db.register_search_view("text", "v", "text")   # an index holds the name
    with pytest.raises(ydbview.InvalidArgumentError):
        db.register_search_view("fo\0und", "v", "text")
    db.register_search_view("found", "v", "text", "apple")
    with pytest.raises(ydbview.InvalidArgumentError):
        db.register_search_view("found", "found", "text")   # over itself
    with pytest.raises(ydbview.MisuseError):
        with conn.read_write():
            db.register_search_view("other", "v", "text")   # would wait for itself

    # A NUL is refused before the transaction sees it: it goes on.
    with conn.read_write() as t:
        with pytest.raises(ydbview.InvalidArgumentError):
            t.set_search_query("found", "a\0b")
        t.set_search_query("found", "apple")
    # What the engine refuses fails the transaction: it rolls back.
    for name, error in (("nosuch", ydbview.NotFoundError), ("v", ydbview.MisuseError)):
        with pytest.raises(error):
            with conn.read_write() as t:
                t.set_search_query(name, "x")
        t = conn.read_write()
        with pytest.raises(error):
            t.set_search_query(name, "x")
        with pytest.raises(error, match="rolled back"):
            t.commit()
        assert not t.active   # freed by C, also after a misuse
    with conn.read() as t:
        for name in ("nosuch", "v", "text"):
            with pytest.raises(ydbview.NotFoundError):
                t.search_query(name)
    # A malformed query fails its transaction; the results stay.
    with pytest.raises(ydbview.InvalidArgumentError, match="invalid full-text query"):
        with conn.read_write() as t:
            t.set_search_query("found", '"unclosed')
    t = conn.read_write()
    with pytest.raises(ydbview.InvalidArgumentError):
        t.set_search_query("found", '"unclosed')
    with pytest.raises(ydbview.InvalidArgumentError, match="rolled back"):
        t.commit()
    assert shown(conn) == {"a": ["k0"]}
    with conn.read() as t2:
        assert t2.search_query("found") == "apple"

    with pytest.raises(TypeError):
        db.search("found", "x", callback=42)  # type: ignore[arg-type]
    with pytest.raises(ydbview.InvalidArgumentError):
        db.search("found", "a\0")
    with pytest.raises(ydbview.InvalidArgumentError):
        db.search("fo\0und", "a")
    assert db.search("nosuch", "apple").exception(30) is not None
    with pytest.raises(ydbview.NotFoundError):
        db.search("nosuch", "apple").result(30)
    with pytest.raises(ydbview.NotFoundError):
        db.search("v", "apple").result(30)          # not a search view
    with pytest.raises(ydbview.InvalidArgumentError, match="invalid full-text query"):
        db.search("found", "apple AND").result(30)
    assert shown(conn) == {"a": ["k0"]}


# ---------------------------------------------------------------------------
# Background searches
# ---------------------------------------------------------------------------

def fill(db: ydbview.Database, rows: int, seed: int) -> None:
    rng = random.Random(seed)
    conn = db.new_connection()
    with conn.read_write() as t:
        t.set_many("c", [(f"k{n:04d}", {"g": "abc"[n % 3], "n": n}, " ".join(rng.sample(WORDS, rng.randint(1, 3))))
                         for n in range(rows)])
    conn.close()


def test_typed_faster_than_searched_the_last_query_applies(db: ydbview.Database) -> None:
    fill(db, 600, 1)
    db.register_search_view("found", "v", "text")
    conn = db.new_connection()
    order: List[str] = []
    threads: List[int] = []
    lock = threading.Lock()

    def completed(search: BackgroundSearch) -> None:
        with lock:
            order.append(search.query)
            threads.append(threading.get_ident())

    typed = ["b*", "bl*", "blu*", "blue*", "blueb*"]
    # Holding a lock the callbacks need: none may run inside search().
    with lock:
        searches = [db.search("found", query, completed) for query in typed]
    outcomes = [search.result(60) for search in searches]
    assert outcomes[-1] is True
    assert all(search.done() for search in searches)
    assert order == typed                      # once each, in the order given
    assert threading.get_ident() not in threads
    with conn.read() as t:
        assert t.search_query("found") == "blueb*"
    assert shown(conn) == expected(conn, "blueb*") != {}
    print(f"{outcomes.count(False)} of {len(typed)} typed queries superseded")


def test_callbacks_are_kept_alive_and_called_once(db: ydbview.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(db, 200, 2)
    db.register_search_view("found", "v", "text")
    baseline = live_callbacks()
    called: List[Tuple[str, bool]] = []
    done = threading.Event()

    def remember(query: str) -> Any:
        # Only the lambda refers to this closure: the search must keep it.
        return lambda search: (called.append((query, search.result())), done.set())

    db.search("found", "cherry", remember("cherry"))
    gc.collect()
    assert done.wait(60)
    assert called == [("cherry", True)]

    # A callback's own result() answers at once; waiting for another search
    # of the database from a callback would wait for its own thread.
    seen: List[Any] = []
    other = db.search("found", "date")
    other.wait(60)

    def nested(search: BackgroundSearch) -> None:
        seen.append(search.result(0))
        later = db.search("found", "dragonfruit")           # a callback may search again
        try:
            later.wait(1)
        except ydbview.MisuseError as error:
            seen.append(error)
        seen.append(other.wait(0))                          # finished: no wait
    db.search("found", "coconut", nested).result(60)
    assert seen[0] is True and isinstance(seen[1], ydbview.MisuseError) and seen[2] is True

    # What a callback raises goes to threading.excepthook; the search stands.
    hooked: List[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: hooked.append(args.exc_value))

    def broken(search: BackgroundSearch) -> None:
        raise ValueError("from a callback")
    search = db.search("found", "apple", broken)
    assert search.result(60) is True
    assert len(hooked) == 1 and isinstance(hooked[0], ValueError)
    conn = db.new_connection()
    assert shown(conn) == expected(conn, "apple")
    assert live_callbacks() == baseline


def test_closing_completes_every_search(tmp_path: Path) -> None:
    outcomes: Dict[str, int] = {"applied": 0, "superseded": 0, "closed": 0}
    for round_number in range(8):
        db = new_database()
        fill(db, 800, 10 + round_number)
        db.register_search_view("found", "v", "text")
        db.register_search_view("found2", "v", "text")
        callbacks: List[str] = []
        searches = [db.search("found", q, lambda s: callbacks.append(s.query)) for q in ("a*", "ap*", "apr*")]
        searches.append(db.search("found2", "b*", lambda s: callbacks.append(s.query)))
        time.sleep(random.Random(round_number).random() * 0.004)
        db.close()
        # Every search finished, its callback called once, before close() returned.
        assert all(search.done() for search in searches)
        assert sorted(callbacks) == sorted(s.query for s in searches)
        for search in searches:
            failure = search.exception(0)
            if failure is None:
                outcomes["applied" if search.result(0) else "superseded"] += 1
            else:
                assert isinstance(failure, ydbview.ClosedError), failure
                outcomes["closed"] += 1
        with pytest.raises((ydbview.MisuseError, ydbview.ClosedError)):
            db.search("found", "x")
    print(outcomes)

    # Closing from a callback: the searches behind it complete all the same.
    db = new_database()
    fill(db, 300, 3)
    db.register_search_view("found", "v", "text")
    closed = threading.Event()
    first = db.search("found", "c*", lambda s: (db.close(), closed.set()))
    behind = [db.search("found", "co*"), db.search("found", "coc*")]
    assert first.wait(60) and closed.is_set() and all(s.wait(60) for s in behind)
    assert behind[-1].exception(0) is None or isinstance(behind[-1].exception(0), ydbview.ClosedError)
    assert db.closed


def test_asyncio_search(db: ydbview.Database) -> None:
    fill(db, 100, 4)
    db.register_search_view("found", "v", "text")
    conn = db.new_connection()

    async def typing() -> List[bool]:
        applied = [await ydbview.aio.search(db, "found", query) for query in ("d*", "da*", "date")]
        with pytest.raises(ydbview.InvalidArgumentError):
            await ydbview.aio.search(db, "found", "date AND")
        with pytest.raises(ydbview.NotFoundError):
            await ydbview.aio.search(db, "nosuch", "date")
        return applied

    assert asyncio.run(typing()) == [True, True, True]
    assert shown(conn) == expected(conn, "date")


TYPED_USE = '''
from typing import List, Optional
import ydbview
import ydbview.aio

def typed(db: ydbview.Database, conn: ydbview.Connection) -> List[bool]:
    outcome: ydbview.RegistrationOutcome = db.register_search_view("found", "v", "text", query="")
    with conn.read_write() as t:
        t.set_search_query("found", "swi*")
    with conn.read() as r:
        query: str = r.search_query("found")
    search: ydbview.BackgroundSearch = db.search("found", query + "f*", callback=lambda s: print(s.result()))
    failure: Optional[ydbview.YDBError] = search.exception(1.0)
    done: bool = search.done() and search.wait(None)
    return [search.result(timeout=2.0), done, failure is None, outcome == ydbview.RegistrationOutcome.BUILT]

async def awaited(db: ydbview.Database) -> bool:
    return await ydbview.aio.search(db, "found", "swift")
'''


@needs_mypy
def test_the_search_api_type_checks_under_mypy(tmp_path: Path) -> None:
    done = mypy(TYPED_USE, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_pyright
def test_the_search_api_type_checks_under_pyright(tmp_path: Path) -> None:
    done = pyright(TYPED_USE, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


# ---------------------------------------------------------------------------
# Random histories
# ---------------------------------------------------------------------------

TYPED_QUERIES = [f"{word[:n]}*" for word in WORDS for n in range(1, len(word) + 1)] + ["apple", "date", ""]


def random_write(t: ydbview.ReadWriteTransaction, rng: random.Random) -> None:
    key = f"k{rng.randint(0, 24)}"
    choice = rng.random()
    if choice < 0.6:
        t.set("c", key, {"g": rng.choice(GROUPS), "n": rng.randint(0, 9)}, " ".join(rng.sample(WORDS, rng.randint(1, 3))))
    elif choice < 0.75:
        if t.get("c", key) is not None:
            t.replace_metadata("c", key, rng.choice(WORDS))
    elif choice < 0.85:
        t.touch_row("c", key)
    else:
        t.remove("c", key)


ORDERS = {
    "rank": lambda group, row: (row.object["n"], row.key),
    "descending": lambda group, row: (-row.object["n"], row.key),
    "key": lambda group, row: row.key,
}


def test_random_histories_give_edit_scripts_from_old_to_new_tables() -> None:
    queries = steps_checked = resorts = 0
    for seed in range(60):
        rng = random.Random(91_000 + seed)
        db = new_database()
        writer, ui = db.new_connection(), db.new_connection()
        with writer.read_write() as t:
            for _ in range(rng.randint(0, 30)):
                random_write(t, rng)
        query = rng.choice(TYPED_QUERIES)
        db.register_search_view("found", "v", "text", query)
        groups, configure = random_configuration(rng)
        m = Mappings.dynamic(lambda group: group != "d", "found") if groups == DYNAMIC else Mappings(GROUPS, "found")
        configure(m)
        start(ui, m)
        old = read_table(db, m)
        for round_number in range(rng.randint(1, 5)):
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.25:
                    # Typed forward or back by one character, in the background.
                    query = rng.choice(TYPED_QUERIES)
                    db.search("found", query).result(60)
                    queries += 1
                    continue
                with writer.read_write() as t:
                    for _ in range(rng.randint(0, 4)):
                        choice = rng.random()
                        if choice < 0.3:
                            query = rng.choice(TYPED_QUERIES)
                            t.set_search_query("found", query)
                            queries += 1
                        elif choice < 0.4:
                            order = rng.choice(sorted(ORDERS))
                            t.set_view_definition("v", ydbview.Grouping(by_group, flavour="object"),
                                                  ydbview.KeySorting(ORDERS[order], flavour="object"),
                                                  version_tag=f"{order}-{round_number}-{rng.random()}")
                            resorts += 1
                        else:
                            random_write(t, rng)
            changeset = m.changes(ui.begin_long_lived_read_transaction())
            new = read_table(db, m)
            steps = changeset.steps()
            steps_checked += len(steps)
            context = f"seed {91_000 + seed} round {round_number} query {query!r}"
            assert apply_steps(steps, old, new) == new, context
            assert shown(ui) == expected(ui, query), context
            old = new
        db.close()
    print(f"{queries} queries, {resorts} re-sorts, {steps_checked} steps checked")
    assert queries > 50 and resorts > 10 and steps_checked > 200


# ---------------------------------------------------------------------------
# Typing into 100,000 rows while another connection commits
# ---------------------------------------------------------------------------

FRUITS = ["apple", "apricot", "avocado", "banana", "blackberry", "blueberry", "cantaloupe", "cherry", "clementine",
          "coconut", "cranberry", "damson", "date", "dragonfruit", "durian", "elderberry", "feijoa", "fig",
          "gooseberry", "grape", "grapefruit", "guava", "honeydew", "huckleberry", "jackfruit", "jujube", "kiwi",
          "kumquat", "lemon", "lime", "lychee", "mango", "melon", "mulberry", "nectarine", "olive", "orange",
          "papaya", "peach", "pear", "persimmon", "pineapple", "plum", "pomegranate", "quince", "raspberry",
          "rhubarb", "satsuma", "strawberry", "tangerine", "ugli", "watermelon"]
BIG_GROUPS = ["a", "b", "c"]


def fruit_words(rng: random.Random) -> bytes:
    return " ".join(rng.sample(FRUITS, rng.randint(1, 3))).encode()


def big_table(ui: ydbview.Connection, m: Mappings) -> Table:
    """The table the mappings show: their sections and counts, and the
    view's keys read a group at a time (plain mappings show every row of a
    group in the view's order), at the snapshot of ``ui``'s long-lived
    read, where the mappings are (another connection keeps committing)."""
    groups: List[str] = []
    sections: List[List[RowName]] = []
    with ui.read() as t:
        view = t.view("found")
        for section in range(m.number_of_sections):
            group = m.group_for_section(section)
            assert group is not None
            keys = view.keys(group)
            assert m.number_of_items_in_section(section) == len(keys)
            groups.append(group)
            sections.append(keys)
    return groups, sections


def fast_apply(steps: Sequence[ydbview.EditStep], old: Table, new: Table) -> Table:
    """``apply_steps`` for tables of thousands of rows: the same checks of
    each step against the table as it stands, without its per-step look at
    the step classes' type hints (which the random histories make)."""
    groups, sections = list(old[0]), [list(rows) for rows in old[1]]
    for step in steps:
        named = None if step.collection is None else (step.collection, step.key)
        kind = step.type
        if kind in (ydbview.StepType.REMOVE_ROW, ydbview.StepType.MOVE_ROW):
            assert step.row is not None and 0 <= step.row < len(sections[step.section]), step
            taken = sections[step.section].pop(step.row)
            assert named is None or taken == named, step
            if kind == ydbview.StepType.MOVE_ROW:
                assert step.to_section is not None and step.to_row is not None, step
                assert 0 <= step.to_row <= len(sections[step.to_section]), step
                sections[step.to_section].insert(step.to_row, taken)
        elif kind == ydbview.StepType.INSERT_ROW:
            assert step.row is not None and 0 <= step.row <= len(sections[step.section]), step
            assert step.final_section is not None and step.final_row is not None, step
            sections[step.section].insert(step.row, named or new[1][step.final_section][step.final_row])
        elif kind == ydbview.StepType.RELOAD_ROW:
            assert step.row is not None and (step.section, step.row) == (step.final_section, step.final_row), step
            assert named is None or sections[step.section][step.row] == named, step
        else:
            raise AssertionError(f"a section step in plain mappings over static groups: {step}")
    return groups, sections


def test_typing_into_100k_rows_while_another_connection_commits() -> None:
    rows = 100_000
    started = time.monotonic()
    db = ydbview.Database()   # bytes: the fastest path of set_many
    db.max_commits_behind = 10**6
    db.register_view("v", ydbview.Grouping(lambda row: row.object[:1].decode(), flavour="object"),
                     ydbview.KeySorting(lambda group, row: row.object, flavour="object"), persistent=False)
    db.register_fts_index("text", ["body"], lambda row: {"body": row.metadata.decode()}, flavour="metadata",
                          version_tag="1")
    rng = random.Random(100_000)
    conn = db.new_connection()
    with conn.read_write() as t:
        t.set_many("items", [(f"k{n:06d}", f"{BIG_GROUPS[n % 3]}:{n:06d}".encode(), fruit_words(rng))
                             for n in range(rows)])
    db.register_search_view("found", "v", "text")
    populated = time.monotonic()

    ui = db.new_connection()
    m = Mappings(BIG_GROUPS, "found")
    start(ui, m)
    table = big_table(ui, m)

    stop = threading.Event()
    commits: List[int] = []
    failures: List[BaseException] = []

    def keep_committing() -> None:
        writer = db.new_connection()
        writes = random.Random(100_001)
        try:
            while not stop.is_set():
                with writer.read_write() as t:
                    for _ in range(5):
                        n = writes.randrange(rows)
                        t.set("items", f"k{n:06d}", f"{BIG_GROUPS[n % 3]}:{n:06d}".encode(), fruit_words(writes))
                commits.append(1)
                time.sleep(0.002)
        except BaseException as error:   # reported by the test below
            failures.append(error)
        finally:
            writer.close()

    thread = threading.Thread(target=keep_committing)
    thread.start()
    typed: List[str] = []
    for word in ("blueberry", "coconut"):
        lengths = list(range(0, len(word) + 1)) + list(range(len(word) - 1, 0, -1))
        typed += ["" if n == 0 else f"{word[:n]}*" for n in lengths]
    steps = 0
    try:
        for query in typed:
            assert db.search("found", query).result(60) is True   # nothing newer was queued
            changeset = m.changes(ui.begin_long_lived_read_transaction())
            new = big_table(ui, m)
            script = changeset.steps()
            steps += len(script)
            assert fast_apply(script, table, new) == new, f"typed {query!r}"
            table = new
    finally:
        stop.set()
        thread.join()
    assert not failures, failures
    typing_done = time.monotonic()

    # The last results equal a search from scratch of the rows as they are.
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    new = big_table(ui, m)
    assert fast_apply(changeset.steps(), table, new) == new
    final = typed[-1]
    with ui.read() as t:
        assert t.search_query("found") == final
        words = {key: meta.decode() for key, _, meta in t.rows("items")}
        view = t.view("found")
        for group in BIG_GROUPS:
            want = [key for key, text in sorted(words.items()) if key[1:].isdigit() and
                    BIG_GROUPS[int(key[1:]) % 3] == group and matches(text, final)]
            assert [key for _, key in view.keys(group)] == want, group
    total = sum(len(rows_shown) for rows_shown in new[1])
    db.close()
    print(f"100k typing: populated in {populated - started:.1f} s; {len(typed)} queries typed in "
          f"{typing_done - populated:.1f} s while {len(commits)} commits landed; {steps} steps checked; "
          f"{total} rows found for {final!r}")
    assert len(commits) > 0 and total > 0
