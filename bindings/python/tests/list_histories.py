"""Random histories for the list-model checks (qt_histories.py,
qt_proxy_histories.py and gtk_histories.py) and the edit-script tests
(test_edit_script.py, test_filtered_views.py): a view "v" of rows
{"g": group, "n": rank} in collection "c", random mappings configurations
over its groups (static groups, dynamic groups, and dynamic groups whose
filter and order read the transaction), random commits, the table a
Mappings shows read through its getters, and a changeset's edit steps
applied to the old table, each checked as it comes (``apply_steps``). No
Qt or GTK here: each checker imports what it drives."""

from __future__ import annotations

import random
import threading
import typing
from typing import Any, Callable, List, Tuple

import ydbview
from ydbview import EditStep, Mappings, RangeOptions, StepType

GROUPS = ["a", "b", "c", "d"]
Configure = Callable[[Mappings], None]


STATIC, DYNAMIC, READING = "static", "dynamic", "dynamic reading the transaction"


def random_configuration(rng: random.Random, reading: bool = False) -> Tuple[str, Configure]:
    """(which groups: STATIC, DYNAMIC or, with ``reading``, READING; what to
    set on a fresh Mappings): every model gets its own Mappings, configured
    the same way. READING mappings need a transaction for their changesets
    (``changes(notifications, txn)``): only callers that pass one ask for them."""
    draw = rng.random()
    if reading:
        groups = DYNAMIC if draw < 0.15 else READING if draw < 0.3 else STATIC
    else:
        groups = DYNAMIC if draw < 0.25 else STATIC
    settings: List[Callable[[Mappings], None]] = []
    if groups == STATIC and rng.random() < 0.5:
        settings.append(lambda m: m.set_is_dynamic_section_for_all_groups(True))
    for group in GROUPS:
        choice = rng.random()
        length, offset, pin = rng.randint(1, 4), rng.randint(0, 2), rng.choice(["beginning", "end"])
        if choice < 0.2:
            settings.append(lambda m, g=group, o=RangeOptions.fixed(length, offset=offset, pin=pin):
                            m.set_range_options(g, o))
        elif choice < 0.4:
            settings.append(lambda m, g=group, o=RangeOptions.flexible(length, offset=offset, pin=pin):
                            m.set_range_options(g, o))
        if rng.random() < 0.3:
            settings.append(lambda m, g=group: m.set_is_reversed(g, True))
        if rng.random() < 0.2:
            settings.append(lambda m, g=group, d=rng.choice([-1, 1]): m.set_cell_drawing_dependency(g, d))
    if rng.random() < 0.2:
        settings.append(lambda m, t=rng.randint(2, 8): m.set_auto_consolidate_groups(t, "all"))

    def configure(m: Mappings) -> None:
        for setting in settings:
            setting(m)
    return groups, configure


def hides_the_group_of_k0(txn: ydbview.CallbackTransaction, group: str) -> bool:
    """A filter that reads the transaction: row k0's group is hidden."""
    k0 = txn.get("c", "k0")
    return k0 is None or k0["g"] != group


def reversed_while_k1_is_odd(txn: ydbview.CallbackTransaction, group: str) -> int:
    """A group order that reads the transaction: reversed while k1's rank is odd."""
    k1 = txn.get("c", "k1")
    return -ord(group) if k1 is not None and k1["n"] % 2 else ord(group)


def new_mappings(groups: str, configure: Configure, view: str = "v") -> Mappings:
    if groups == DYNAMIC:
        m = Mappings.dynamic(lambda group: group != "d", view)
    elif groups == READING:
        m = Mappings.dynamic(hides_the_group_of_k0, view, key=reversed_while_k1_is_odd, transaction=True)
    else:
        m = Mappings(GROUPS, view)
    configure(m)
    return m


def random_commit(writer: ydbview.Connection, rng: random.Random) -> None:
    with writer.read_write() as t:
        for _ in range(rng.randint(1, 5)):
            key = f"k{rng.randint(0, 14)}"
            choice = rng.random()
            if choice < 0.55:
                t.set("c", key, {"g": rng.choice("abcd"), "n": rng.randint(0, 9)})
            elif choice < 0.7:
                t.touch_object("c", key)
            elif choice < 0.97:
                t.remove("c", key)
            else:
                t.remove_all("c")


def mappings_table(db: ydbview.Database, m: Mappings, view_name: str = "v") -> List[Tuple[str, List[Tuple[str, str]]]]:
    """The table the mappings over view ``view_name`` show, read through
    its getters and the view (at the newest snapshot, which is the models'
    after a catch-up)."""
    reader = db.new_connection()
    table = []
    with reader.read() as t:
        view = t.view(view_name)
        for section in range(m.number_of_sections):
            rows = []
            for row in range(m.number_of_items_in_section(section) or 0):
                rows.append(view.key_at(*m.group_and_index_for_row((section, row))))
            table.append((m.group_for_section(section) or "", rows))
    reader.close()
    return table


RowName = Tuple[str, str]
Table = Tuple[List[str], List[List[RowName]]]


def read_table(db: ydbview.Database, mappings: Mappings, view_name: str = "v") -> Table:
    """The table the mappings show now, as (groups, rows of each section)."""
    shown = mappings_table(db, mappings, view_name)
    return [group for group, _ in shown], [rows for _, rows in shown]


def table_at(conn: ydbview.Connection, mappings: Mappings, view_name: str = "v") -> Table:
    """The table the mappings show, read on ``conn``'s own snapshot (its
    long-lived read), not the newest: for readers that other writers keep
    committing under (test_aio.py, test_multiprocess.py)."""
    groups: List[str] = []
    sections: List[List[RowName]] = []
    with conn.read() as t:
        view = t.view(view_name)
        for section in range(mappings.number_of_sections):
            groups.append(mappings.group_for_section(section) or "")
            sections.append([view.key_at(*mappings.group_and_index_for_row((section, row)))
                             for row in range(mappings.number_of_items_in_section(section) or 0)])
    return groups, sections


def apply_steps(steps: List[EditStep], old: Table, new: Table) -> Table:
    """Applies ``steps`` one by one, asserting each is valid at its moment."""
    groups, sections = list(old[0]), [list(rows) for rows in old[1]]
    for number, step in enumerate(steps):
        where = f"step {number} ({step})"
        # The step's class types some fields without Optional: they must be set.
        promised = [name for name, hint in typing.get_type_hints(type(step)).items()
                    if type(None) not in typing.get_args(hint) and hint is not Any]
        assert all(getattr(step, name) is not None for name in promised), (where, promised)
        assert isinstance(step, EditStep) and type(step).__name__.lower().startswith(
            step.type.name.replace("_", "").lower()), where
        named = None if step.collection is None else (step.collection, step.key)
        if step.type == StepType.REMOVE_SECTION:
            assert groups[step.section] == step.group and sections[step.section] == [], where
            del groups[step.section], sections[step.section]
        elif step.type == StepType.INSERT_SECTION:
            assert 0 <= step.section <= len(groups) and step.row is None, where
            groups.insert(step.section, step.group)
            sections.insert(step.section, [])
        elif step.type in (StepType.REMOVE_ROW, StepType.MOVE_ROW):
            assert step.row is not None and 0 <= step.row < len(sections[step.section]), where
            taken = sections[step.section].pop(step.row)
            assert named is None or taken == named, where
            if step.type == StepType.MOVE_ROW:
                assert (step.to_section, step.to_row) != (step.section, step.row), where
                assert 0 <= step.to_row <= len(sections[step.to_section]), where
                sections[step.to_section].insert(step.to_row, taken)
        elif step.type == StepType.INSERT_ROW:
            assert 0 <= step.row <= len(sections[step.section]), where
            arriving = named or new[1][step.final_section][step.final_row]
            sections[step.section].insert(step.row, arriving)
        else:
            assert step.type == StepType.RELOAD_ROW, where
            assert (step.section, step.row) == (step.final_section, step.final_row), where
            assert named is None or sections[step.section][step.row] == named, where
    return groups, sections


def new_database(rng: random.Random) -> ydbview.Database:
    """A database with view "v" (grouped by "g", sorted by "n" then key);
    a tenth of the histories let a connection fall only one or two commits
    behind, so catching up after more commits must reset the model."""
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.KeySorting(lambda group, row: (row.object["n"], row.key), flavour="object"),
                     persistent=False)
    if rng.random() < 0.1:
        db.max_commits_behind = rng.randint(1, 2)
    return db


def begin_history(rng: random.Random) -> Tuple[ydbview.Database, ydbview.Connection, Callable[[], Mappings]]:
    """A new database with a few random commits made, its writer, and a
    factory of Mappings all configured alike (one per model under test)."""
    db = new_database(rng)
    writer = db.new_connection()
    for _ in range(rng.randint(0, 4)):
        random_commit(writer, rng)
    groups, configure = random_configuration(rng, reading=True)
    return db, writer, lambda: new_mappings(groups, configure)


def busy_writer(db: ydbview.Database, rng: random.Random, commits: int = 300) -> threading.Event:
    """Starts a thread that makes ``commits`` random commits as fast as it
    can; the returned event is set once it has closed its connection."""
    done = threading.Event()

    def write() -> None:
        writer = db.new_connection()
        for _ in range(commits):
            random_commit(writer, rng)
        writer.close()
        done.set()

    threading.Thread(target=write).start()
    return done


def write_from_another_thread(db: ydbview.Database, count: int = 30) -> threading.Thread:
    """Starts a thread that commits rows k0 … k{count-1}, one commit each,
    with objects (7 * number) % count: a permutation, so a view sorted by
    object shows every row at a known place. Join it when done."""
    def write() -> None:
        connection = db.new_connection()
        for number in range(count):
            with connection.read_write() as t:
                t.set("c", f"k{number}", (number * 7) % count)
        connection.close()

    thread = threading.Thread(target=write)
    thread.start()
    return thread
