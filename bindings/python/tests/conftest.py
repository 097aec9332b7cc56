"""Fixtures: a fresh temporary database and connections for each test."""

from __future__ import annotations

from typing import Iterator

import pytest

import ydbview


@pytest.fixture
def db() -> Iterator[ydbview.Database]:
    database = ydbview.Database()
    yield database
    database.close()


@pytest.fixture
def conn(db: ydbview.Database) -> Iterator[ydbview.Connection]:
    connection = db.new_connection()
    yield connection
    connection.close()


@pytest.fixture
def other(db: ydbview.Database) -> Iterator[ydbview.Connection]:
    connection = db.new_connection()
    yield connection
    connection.close()


@pytest.fixture
def json_db() -> Iterator[ydbview.Database]:
    database = ydbview.Database(serializer=ydbview.JSONSerializer())
    yield database
    database.close()
