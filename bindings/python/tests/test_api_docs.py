"""Every public name of the package says what it does: module-level
functions and classes in ``ydbview.__all__`` and every public method,
property and classmethod they define (not the ones inherited from
builtins, enum or tuple)."""

from __future__ import annotations

import enum
import inspect
from typing import Any, List

import ydbview

# Members every class inherits from these carry the base's docstring, not ours.
_FOREIGN_BASES = (object, int, str, tuple, dict, Exception, BaseException, enum.Enum, enum.IntEnum,
                  enum.IntFlag, enum.Flag, LookupError, ValueError, Warning, UserWarning, RuntimeError)


def _own_doc(value: Any) -> bool:
    doc = getattr(value, "__doc__", None)
    return bool(doc and doc.strip())


def _undocumented_members(cls: type) -> List[str]:
    missing: List[str] = []
    fields = set(getattr(cls, "_fields", ()))
    for name, raw in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(cls, enum.EnumMeta) and name in cls.__members__:
            continue  # enum members are values, documented by the class
        if name in fields:
            continue  # NamedTuple fields are tuple slots with generated docs
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if isinstance(raw, property) or inspect.isfunction(raw):
            if not _own_doc(raw):
                missing.append(f"{cls.__name__}.{name}")
    return missing


def test_every_public_name_has_a_docstring() -> None:
    missing: List[str] = []
    for name in ydbview.__all__:
        value = getattr(ydbview, name)
        if inspect.isclass(value):
            if value in _FOREIGN_BASES:
                continue
            if not _own_doc(value):
                missing.append(name)
            for klass in value.__mro__:
                if klass in _FOREIGN_BASES or klass.__module__.split(".")[0] != "ydbview":
                    continue
                # private bases (e.g. _Closeable) count: their public members are ours
                missing.extend(m for m in _undocumented_members(klass) if m not in missing)
        elif callable(value):
            if not _own_doc(value):
                missing.append(name)
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


def test_the_walk_sees_members() -> None:
    # guard against a walk that silently checks nothing
    class Probe:
        def documented(self) -> None:
            """Yes."""

        def bare(self) -> None:
            pass

        @property
        def prop(self) -> int:
            return 0

    assert _undocumented_members(Probe) == ["Probe.bare", "Probe.prop"]
