"""Live data on an asyncio loop: ``async for`` over a connection's commits
and over mappings' changesets, and awaitable writes.

They wait on the connection's wakeup descriptor (``Connection.wakeup_fd``)
with ``loop.add_reader``: no thread and no polling while nothing changes.

    async for changeset in ydbview.aio.changesets(ui, mappings):
        apply(changeset)            # the first one is empty: the initial state

A consumer slower than the writers gets one changeset for all the commits
made meanwhile (none is dropped). The iteration ends when the connection
or its database closes; ``ReloadRequired`` is raised when the connection
fell more than ``Database.max_commits_behind`` commits behind.

``search`` awaits a background search of a search view, for a query box:

    if await ydbview.aio.search(db, "found", text + "*"):
        ...                         # committed: the changesets show it
"""

from __future__ import annotations

import asyncio
import threading
from typing import AsyncIterator, Callable, List, Optional, Tuple, TypeVar

from .errors import ClosedError, YDBError
from .mappings import Changeset, Mappings
from .notifications import CommitNotification
from .search import BackgroundSearch
from .store import Connection, Database, ReadTransaction, ReadWriteTransaction

T = TypeVar("T")

__all__ = ["commits", "changesets", "read_write", "read", "search"]


async def _readable(connection: Connection, fd: int) -> None:
    """Returns once ``fd`` (``connection``'s wakeup descriptor) is readable,
    or once the connection or its database is being closed. The reader is
    removed as soon as it fired: the descriptor stays readable until the
    consumer catches up, and a reader left in place would run at every turn
    of the loop meanwhile. A close lets go of the descriptor before it is
    closed, so that a closed descriptor never sits in the loop's selector
    (where it would never fire)."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop_thread = threading.get_ident()

    def fire() -> None:
        if not ready.done():
            ready.set_result(None)

    def release() -> None:
        loop.remove_reader(fd)
        fire()

    def closing() -> None:
        if threading.get_ident() == loop_thread:
            release()
        else:
            loop.call_soon_threadsafe(release)

    removals = [connection._when_closing(closing), connection.database._when_closing(closing)]
    loop.add_reader(fd, fire)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
        for remove in removals:
            remove()


async def commits(connection: Connection) -> AsyncIterator[List[CommitNotification]]:
    """Each time other connections committed: the notifications of the
    commits this connection skipped, oldest first (it moves forward with
    ``begin_long_lived_read_transaction()``, and stays in that long-lived
    read). The first wait starts from the connection's current snapshot.
    Ends when the connection or its database closes."""
    try:
        while not (connection.closed or connection.database.closed):
            fd = connection.wakeup_fd()
            await _readable(connection, fd)
            if connection.closed or connection.database.closed:
                return
            yield connection.begin_long_lived_read_transaction()
    except ClosedError:   # the database closed while its handle was open
        return


async def changesets(connection: Connection, mappings: Mappings) -> AsyncIterator[Changeset]:
    """``mappings``' changesets as commits come: first an empty one, once
    the mappings are updated to the connection's newest snapshot (the
    initial state to draw), then one per catch-up. The connection is left
    in a long-lived read transaction, which the iteration moves forward."""
    try:
        connection.begin_long_lived_read_transaction()
        with connection.read() as transaction:
            mappings.update(transaction)
            first = mappings.changes([], transaction)
        yield first
        async for notifications in commits(connection):
            with connection.read() as transaction:
                changeset = mappings.changes(notifications, transaction)
            yield changeset
    except ClosedError:
        return


async def read_write(connection: Connection, body: Callable[[ReadWriteTransaction], T]) -> T:
    """Runs ``body`` in a read-write transaction on a worker thread (the
    loop's default executor), so that waiting for the write lock and the
    views' callbacks do not block the loop: committed when ``body``
    returns, rolled back when it raises."""
    def run() -> T:
        with connection.read_write() as transaction:
            return body(transaction)
    return await asyncio.get_running_loop().run_in_executor(None, run)


async def read(connection: Connection, body: Callable[[ReadTransaction], T]) -> T:
    """Runs ``body`` in a read transaction on a worker thread."""
    def run() -> T:
        with connection.read() as transaction:
            return body(transaction)
    return await asyncio.get_running_loop().run_in_executor(None, run)


async def search(database: Database, name: str, query: str) -> bool:
    """``Database.search`` awaited: True once the query's results are
    committed, False when a newer query for search view ``name``
    superseded it; raises why it failed (``NotFoundError``,
    ``InvalidArgumentError``, ``ClosedError``...). The loop never waits:
    the search's completion wakes it. Cancelling the awaiting task does not
    stop the search (a newer query does)."""
    loop = asyncio.get_running_loop()
    finished: "asyncio.Future[bool]" = loop.create_future()

    def settle(outcome: Tuple[bool, Optional[YDBError]]) -> None:
        if finished.done():   # the awaiting task was cancelled
            return
        applied, failure = outcome
        if failure is not None:
            finished.set_exception(failure)
        else:
            finished.set_result(applied)

    def completed(done: BackgroundSearch) -> None:
        # On the search's thread, where its outcome is known at once.
        failure = done.exception()
        outcome = (failure is None and done.result(), failure)
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:   # the loop closed meanwhile: nobody is waiting
            pass

    database.search(name, query, completed)
    return await finished
