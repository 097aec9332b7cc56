"""Error messages a Python user sees name Python's spellings (None, the
snake_case methods), not the engine's Swift or C ones ("use nil",
beginLongLivedReadTransaction(), NULL). Each message is triggered for real,
so a change of the engine's wording fails here rather than leaking through."""

from __future__ import annotations

import re

import pytest

import ydbview

# Swift/C words that mean nothing in Python, where Python has its own.
SWIFT_OR_C = re.compile(r"\bnil\b|\bNULL\b|ObjectIdentifier|[a-z]+[A-Z]\w*\(\)|\w+\(\w+:")


def assert_python_terms(message: str) -> None:
    assert not SWIFT_OR_C.search(message), message


@pytest.mark.parametrize("path", ["", ":memory:"])
def test_a_path_that_names_no_file_says_none(path: str) -> None:
    with pytest.raises(ydbview.InvalidArgumentError) as raised:
        ydbview.Database(path)
    assert "None" in str(raised.value)
    assert_python_terms(str(raised.value))


def test_a_released_long_lived_read_names_the_python_method() -> None:
    with ydbview.Database() as db:
        db.max_commits_behind = 1
        reader, writer = db.new_connection(), db.new_connection()
        reader.begin_long_lived_read_transaction()
        for i in range(3):
            with writer.read_write() as t:
                t.set("c", str(i), b"x")
        with pytest.raises(ydbview.ReloadRequired) as raised:
            with reader.read() as t:
                t.count("c")
        assert "begin_long_lived_read_transaction()" in str(raised.value)
        assert_python_terms(str(raised.value))


def test_the_pattern_sees_swift_and_c_words() -> None:
    # The check above is only as good as this pattern.
    for message in ("use nil for a temporary database", "call beginLongLivedReadTransaction()",
                    "give one (update(with:), changes(for:in:))", "pass NULL",
                    "ObjectIdentifier(0x00007f)"):
        with pytest.raises(AssertionError):
            assert_python_terms(message)
    assert_python_terms("call begin_long_lived_read_transaction() (pass None, or no path)")
