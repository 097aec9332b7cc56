"""Database.register_view_async: a population in the background while other
connections commit and read, compared with a synchronous registration;
progress; cancellation; exceptions from callbacks; closing meanwhile; the
same-name rule (docs/behaviour.md, "Asynchronous registration")."""

from __future__ import annotations

import concurrent.futures
import random
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ydbview
from ydbview import _callbacks

GROUPS = ["g0", "g1", "g2", "g3", None]


class Pause:
    """Holds the population at its ``after``-th grouping call until ``resume()``."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.calls = 0
        self.lock = threading.Lock()
        self.reached = threading.Event()
        self.resumed = threading.Event()

    def passed(self) -> None:
        with self.lock:
            self.calls += 1
            call = self.calls
        if call == self.after:
            self.reached.set()
            self.resumed.wait(120)

    def wait_until_reached(self) -> None:
        assert self.reached.wait(120), "the population never paused"

    def resume(self) -> None:
        self.resumed.set()


def make_view(pause: Optional[Pause] = None, fail_on: Optional[str] = None) -> Tuple[Any, Any]:
    """Objects are (group, rank); sorted by rank, then key: a total order."""

    @ydbview.grouping(flavour="object")
    def by_group(row: ydbview.ViewRow) -> Optional[str]:
        if pause is not None:
            pause.passed()
        if row.key == fail_on:
            raise ValueError(f"no group for {row.key}")
        return row.object[0]

    @ydbview.key_sorting(flavour="object")
    def by_rank(group: str, row: ydbview.ViewRow) -> Any:
        return (row.object[1], row.key)

    return by_group, by_rank


def fill(db: ydbview.Database, rows: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    with db.new_connection().read_write() as t:
        for index in range(rows):
            t.set("items", f"k{index}", [rng.choice(GROUPS), rng.randrange(1000)])


def random_write(t: ydbview.ReadWriteTransaction, rng: random.Random, keys: int) -> None:
    key = f"k{rng.randrange(keys + keys // 10)}"
    value = [rng.choice(GROUPS), rng.randrange(1000)]
    roll = rng.randrange(100)
    if roll < 45:
        t.set("items", key, value)
    elif roll < 55:
        t.replace_metadata("items", key, {"m": 1})
    elif roll < 62:
        t.touch_object("items", key)
    elif roll < 80:
        t.remove("items", key)
    elif roll < 90:
        t.remove_many("items", [f"k{rng.randrange(keys)}" for _ in range(5)])
    else:
        t.remove("items", key)
        t.set("items", key, value)


def dump(t: ydbview.ReadTransaction, view: str) -> Dict[str, List[str]]:
    v = t.view(view)
    return {group: v.keys(group) for group in v.groups}


@pytest.fixture
def jdb() -> Any:
    database = ydbview.Database(serializer=ydbview.JSONSerializer())
    yield database
    database.close()


def test_commits_and_reads_go_on_and_the_view_equals_a_synchronous_one(jdb: ydbview.Database) -> None:
    rows = 20_000
    fill(jdb, rows)
    installed_at: List[int] = []
    jdb.add_commit_observer(
        lambda n: installed_at.append(n.snapshot) if not installed_at and ydbview.has_view_changes([n], "v") else None)
    stop = threading.Event()
    finished = threading.Event()
    commits_while_running = [0]
    reads: List[Tuple[int, bool]] = []
    problems: List[BaseException] = []

    def writer() -> None:
        rng = random.Random(7)
        conn = jdb.new_connection()
        try:
            while not stop.is_set():
                with conn.read_write() as t:
                    for _ in range(rng.randrange(1, 4)):
                        random_write(t, rng, rows)
                if not finished.is_set():
                    commits_while_running[0] += 1
                time.sleep(0.001)
        except BaseException as exc:  # noqa: B902
            problems.append(exc)
        finally:
            conn.close()

    def reader() -> None:
        conn = jdb.new_connection()
        try:
            while not stop.is_set():
                with conn.read() as t:
                    reads.append((t.snapshot, t.has_view("v")))
                time.sleep(0.002)
        except BaseException as exc:  # noqa: B902
            problems.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    pause = Pause(after=rows // 2)
    grouping, sorting = make_view(pause)
    registration = jdb.register_view_async("v", grouping, key=sorting, version_tag="1")
    try:
        pause.wait_until_reached()
        # Held half-way: commits go through, no reader sees the view.
        deadline = time.monotonic() + 60
        while commits_while_running[0] < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        conn = jdb.new_connection()
        rng = random.Random(99)
        for _ in range(30):
            with conn.read_write() as t:
                random_write(t, rng, rows)
        with conn.read_write() as t:
            t.remove("items", "k1")
            t.remove("items", f"k{rows - 2}")
            t.set("items", "k2", ["g9", 5])
            t.set("items", f"k{rows - 3}", ["g9", 6])
            t.set("items", "k3", [None, 7])
            t.remove("items", "k4")
            t.set("items", "k4", ["g0", 8])
            t.set("items", "new", ["g8", 9])
        with conn.read_write() as t:  # enough changed rows for a catch-up round on a read snapshot
            for index in range(0, rows, 8):
                t.set("items", f"k{index}", [f"g{index % 3}", index % 997])
        with conn.read() as t:
            assert not t.has_view("v")
        assert not registration.done()
        with pytest.raises(TimeoutError):
            registration.result(timeout=0.01)
    finally:
        pause.resume()
    assert registration.result() == ydbview.RegistrationOutcome.BUILT
    finished.set()
    stop.set()
    for thread in threads:
        thread.join(60)
    assert problems == []
    assert commits_while_running[0] >= 20
    assert registration.done() and not registration.cancelled()
    assert registration.exception() is None

    grouping, sorting = make_view()
    jdb.register_view("sync", grouping, key=sorting, version_tag="1")
    with conn.read() as t:
        assert dump(t, "v") == dump(t, "sync")
        assert t.view("v").count() > rows // 3
        assert t.view("v").group_of("items", "new") == "g8"
        assert t.view("v").group_of("items", "k3") is None
    install = installed_at[0]
    assert any(not visible for _, visible in reads)
    for snapshot, visible in reads:
        assert visible == (snapshot >= install), (snapshot, install)
    conn.close()


def test_progress_is_monotonic_bounded_and_ends_at_total(jdb: ydbview.Database) -> None:
    fill(jdb, 20_000)
    reports: List[Tuple[int, int]] = []
    threads = set()

    def progress(done: int, total: int) -> None:
        reports.append((done, total))
        threads.add(threading.get_ident())

    grouping, sorting = make_view()
    registration = jdb.register_view_async("v", grouping, key=sorting, progress=progress)
    assert registration.result() == ydbview.RegistrationOutcome.BUILT
    assert 3 <= len(reports) <= 103, reports
    assert reports[0] == (0, 40_000)
    assert reports[-1] == (40_000, 40_000)
    dones = [done for done, _ in reports]
    assert dones == sorted(dones)
    assert {total for _, total in reports} == {40_000}
    assert threading.get_ident() not in threads


def test_cancel_installs_nothing_and_the_database_keeps_working(jdb: ydbview.Database) -> None:
    fill(jdb, 5000)
    before = _callbacks.live()
    pause = Pause(after=2000)
    grouping, sorting = make_view(pause)
    registration = jdb.register_view_async("v", grouping, key=sorting)
    pause.wait_until_reached()
    assert registration.cancel() is True
    pause.resume()
    with pytest.raises(ydbview.CancelledError) as caught:
        registration.result()
    assert isinstance(caught.value, concurrent.futures.CancelledError)
    assert caught.value.code == ydbview.Status.CANCELLED
    assert registration.cancelled()
    assert registration.cancel() is False  # after the end: nothing
    assert "v" not in jdb.registered_views
    assert _callbacks.live() == before  # the view's callbacks and the reporter were released
    conn = jdb.new_connection()
    with conn.read_write() as t:
        t.set("items", "after", ["g1", 3])
    with conn.read() as t:
        assert not t.has_view("v")
    grouping, sorting = make_view()
    assert jdb.register_view_async("v", grouping, key=sorting).result() == ydbview.RegistrationOutcome.BUILT
    jdb.register_view("sync", grouping, key=sorting)
    with conn.read() as t:
        assert dump(t, "v") == dump(t, "sync")
    conn.close()


def test_an_exception_in_a_callback_comes_back_from_result(jdb: ydbview.Database) -> None:
    fill(jdb, 3000)
    grouping, sorting = make_view(fail_on="k1500")
    registration = jdb.register_view_async("v", grouping, key=sorting)
    with pytest.raises(ValueError, match="no group for k1500") as caught:
        registration.result()
    assert any(frame.name == "by_group" for frame in __import__("traceback").extract_tb(caught.value.__traceback__))
    assert isinstance(registration.exception(), ValueError)
    assert "v" not in jdb.registered_views


def test_an_exception_while_catching_up_comes_back_from_result(jdb: ydbview.Database) -> None:
    fill(jdb, 3000)
    pause = Pause(after=1000)
    grouping, sorting = make_view(pause, fail_on="poison")
    registration = jdb.register_view_async("v", grouping, key=sorting)
    pause.wait_until_reached()
    with jdb.new_connection().read_write() as t:
        t.set("items", "poison", ["g0", 1])
    pause.resume()
    with pytest.raises(ValueError, match="poison"):
        registration.result()
    assert "v" not in jdb.registered_views


def test_a_progress_callable_that_raises_cancels(jdb: ydbview.Database) -> None:
    fill(jdb, 5000)
    waited: List[BaseException] = []

    def progress(done: int, total: int) -> None:
        try:
            registration.wait()
        except ydbview.MisuseError as exc:
            waited.append(exc)
        if done > 0:
            raise KeyError("stop here")

    grouping, sorting = make_view()
    registration = jdb.register_view_async("v", grouping, key=sorting, progress=progress)
    with pytest.raises(KeyError, match="stop here"):
        registration.result()
    assert waited and "wait for itself" in str(waited[0])
    assert "v" not in jdb.registered_views


def test_closing_the_database_during_population(tmp_path: Any) -> None:
    path = tmp_path / "db.sqlite"
    db = ydbview.Database(path, serializer=ydbview.JSONSerializer())
    fill(db, 3000)
    pause = Pause(after=1000)
    grouping, sorting = make_view(pause)
    registration = db.register_view_async("v", grouping, key=sorting)
    pause.wait_until_reached()
    threading.Timer(0.2, pause.resume).start()
    db.close()  # returns once the registration let go of the database
    with pytest.raises(ydbview.ClosedError):
        registration.result()
    again = ydbview.Database(path, serializer=ydbview.JSONSerializer())
    try:
        grouping, sorting = make_view()
        assert again.register_view_async("v", grouping, key=sorting).result() == ydbview.RegistrationOutcome.BUILT
    finally:
        again.close()


def test_the_later_request_of_a_name_wins(jdb: ydbview.Database) -> None:
    fill(jdb, 3000)
    pause = Pause(after=500)
    grouping, sorting = make_view(pause)
    first = jdb.register_view_async("v", grouping, key=sorting, version_tag="1")
    pause.wait_until_reached()
    grouping2, sorting2 = make_view()
    second = jdb.register_view_async("v", grouping2, key=sorting2, version_tag="2")
    pause.resume()
    with pytest.raises(ydbview.CancelledError):
        first.result()
    assert second.result() == ydbview.RegistrationOutcome.BUILT

    pause = Pause(after=500)
    grouping, sorting = make_view(pause)
    third = jdb.register_view_async("v", grouping, key=sorting, version_tag="3")
    pause.wait_until_reached()
    jdb.unregister_view("v")
    pause.resume()
    with pytest.raises(ydbview.CancelledError):
        third.result()
    assert jdb.registered_views == []


def test_refused_before_starting(jdb: ydbview.Database) -> None:
    before = _callbacks.live()
    grouping, sorting = make_view()
    with pytest.raises(ydbview.InvalidArgumentError):
        jdb.register_view_async("a\0b", grouping, key=sorting)
    with pytest.raises(TypeError):
        jdb.register_view_async("v", grouping, key=sorting, progress=42)
    assert _callbacks.live() == before
