"""asyncio: a real loop follows a view with ``async for`` while two writers
commit through ``aio.read_write``; every changeset, applied step by step
to the table drawn so far, gives the table the mappings show, and the last
one equals a fresh read. The wakeup descriptor underneath: readable after
another connection's commit, not after the connection's own, cleared by
catching up."""

from __future__ import annotations

import asyncio
import random
import select
from typing import Any, Iterator, List, Optional

import pytest

import ydbview
import ydbview.aio as aio
from list_histories import GROUPS, Table, mappings_table, table_at
from test_edit_script import apply_steps


@pytest.fixture
def db() -> Iterator[ydbview.Database]:
    database = ydbview.Database(serializer=ydbview.JSONSerializer())
    database.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                           ydbview.KeySorting(lambda group, row: (row.object["n"], row.key), flavour="object"))
    yield database
    database.close()


def readable(connection: ydbview.Connection) -> bool:
    ready, _, _ = select.select([connection], [], [], 0)
    return bool(ready)


def random_write(t: ydbview.ReadWriteTransaction, rng: random.Random) -> None:
    for _ in range(rng.randint(1, 4)):
        key = f"k{rng.randint(0, 19)}"
        if rng.random() < 0.75:
            t.set("c", key, {"g": rng.choice("abcd"), "n": rng.randint(0, 9)})
        else:
            t.remove("c", key)


def test_the_descriptor_is_readable_until_the_connection_catches_up(db: ydbview.Database) -> None:
    ui, writer = db.new_connection(), db.new_connection()
    ui.begin_long_lived_read_transaction()
    assert ui.wakeup_fd() == ui.fileno() >= 0
    assert not readable(ui)
    with writer.read_write() as t:
        t.set("c", "k", {"g": "a", "n": 1})
    assert readable(ui) and readable(ui)   # level-triggered: stays readable
    assert not readable(writer)            # its own commit
    ui.begin_long_lived_read_transaction()
    assert not readable(ui)
    # A connection that had not read since commits came is readable at once.
    late = db.new_connection()
    with writer.read_write() as t:
        t.set("c", "k", {"g": "b", "n": 2})
    assert readable(late)
    with late.read():
        pass
    assert not readable(late)
    late.close()
    with pytest.raises(ydbview.MisuseError):
        late.wakeup_fd()


def test_async_for_follows_two_writers_to_the_fresh_table(db: ydbview.Database) -> None:
    ui = db.new_connection()
    writers = [db.new_connection(), db.new_connection()]
    mappings = ydbview.Mappings(GROUPS, "v")
    drawn: List[Table] = []

    async def write(connection: ydbview.Connection, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(25):
            await aio.read_write(connection, lambda t: random_write(t, rng))

    async def main() -> int:
        target: Optional[int] = None

        async def follow() -> None:
            table: Optional[Table] = None
            async for changeset in aio.changesets(ui, mappings):
                new = table_at(ui, mappings)
                if table is None:
                    assert changeset.is_empty
                    table = new
                else:
                    table = apply_steps(changeset.steps(), table, new)
                    assert table == new
                drawn.append(table)
                if target is not None and ui.snapshot >= target:
                    return

        follower = asyncio.create_task(follow())
        await asyncio.gather(write(writers[0], 1), write(writers[1], 2))
        # One more commit once the target is known: the follower wakes at
        # least once after it, whatever it caught up with before.
        target = db.snapshot + 1
        await aio.read_write(writers[0], lambda t: t.set("c", "last", {"g": "a", "n": 5}))
        await asyncio.wait_for(follower, 60)
        return target

    target = asyncio.run(main())
    assert ui.snapshot == db.snapshot == target
    assert len(drawn) >= 2
    fresh = mappings_table(db, mappings)
    assert drawn[-1] == ([group for group, _ in fresh], [rows for _, rows in fresh])


def test_commits_end_when_the_connection_closes(db: ydbview.Database) -> None:
    ui, writer = db.new_connection(), db.new_connection()

    async def main() -> List[int]:
        seen: List[int] = []

        async def follow() -> None:
            async for notifications in aio.commits(ui):
                seen.extend(n.snapshot for n in notifications)
                ui.close()

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0)
        await aio.read_write(writer, lambda t: t.set("c", "k", {"g": "a", "n": 1}))
        await asyncio.wait_for(follower, 10)
        return seen

    assert asyncio.run(main()) == [db.snapshot]


def test_reads_and_writes_are_awaitable(db: ydbview.Database) -> None:
    connection = db.new_connection()

    async def main() -> Any:
        await aio.read_write(connection, lambda t: t.set("c", "k", {"g": "a", "n": 3}))
        return await aio.read(connection, lambda t: t.get("c", "k"))

    assert asyncio.run(main()) == {"g": "a", "n": 3}


@pytest.mark.parametrize("closing", ["connection", "database"])
def test_closing_while_an_iteration_waits_ends_it(closing: str) -> None:
    database = ydbview.Database(serializer=ydbview.JSONSerializer())
    ui = database.new_connection()

    async def main() -> List[int]:
        seen: List[int] = []

        async def follow() -> None:
            async for notifications in aio.commits(ui):
                seen.extend(n.snapshot for n in notifications)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.05)   # the iteration is waiting on the descriptor
        (ui if closing == "connection" else database).close()
        await asyncio.wait_for(follower, 10)
        return seen

    assert asyncio.run(main()) == []
    database.close()
