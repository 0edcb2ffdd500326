"""Weak-valued intern tables: the single mechanism behind hash-consing.

A table maps an exact, normalized key to the one live object built from it. Values
are held weakly, so dropping every reference to a node frees it and its entry; the
key is compared by equality (never by hash alone). The table's lock makes
"look up, else build and insert" atomic, so threads building the same expression
get the same object.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_TABLE_SIZES: dict[str, Callable[[], int]] = {}


class InternTable(Generic[T]):
    """One table per interned class; `intern(key, build)` returns the canonical object."""

    __slots__ = ("name", "_entries", "_lock")

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: weakref.WeakValueDictionary[Hashable, T] = weakref.WeakValueDictionary()
        self._lock = threading.RLock()
        _TABLE_SIZES[name] = self.__len__

    def intern(self, key: Hashable, build: Callable[[], T]) -> T:
        """Return the live object for `key`, building and registering it if there is none."""
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None:
                return existing
            created = build()
            self._entries[key] = created
            return created

    def __len__(self) -> int:
        return len(self._entries)


def intern_table_sizes() -> dict[str, int]:
    """Live entries per table: what a user hunting a leak of graph objects looks at."""
    return {name: size() for name, size in _TABLE_SIZES.items()}


class InternedMeta(type):
    """Metaclass that routes every construction (positional, keyword, `attrs.evolve`,
    unpickling) through a normalizing step and the class's intern table.

    A subclass defines `_table` and `_intern_key(*args, **kwargs)`, which returns the exact
    key and the normalized positional arguments for the real constructor.
    """

    _table: InternTable[Any]

    def _intern_key(cls, *args: Any, **kwargs: Any) -> tuple[Hashable, tuple[object, ...]]:
        raise NotImplementedError(f"{cls.__name__} must define _intern_key")

    def __call__(cls, *args: object, **kwargs: object) -> Any:  # typed by each class's __init__
        key, normalized = cls._intern_key(*args, **kwargs)
        return cls._table.intern(key, lambda: super(InternedMeta, cls).__call__(*normalized))


_PLAIN_TYPES: frozenset[type] = frozenset({bool, int, str, bytes, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The attrs field names of `cls` (None if it is not an attrs class), cached per class."""
    found = _FIELD_NAMES.get(cls, ())
    if found == ():
        fields: tuple[Any, ...] | None = getattr(cls, "__attrs_attrs__", None)
        found = None if fields is None else tuple(field.name for field in fields)
        _FIELD_NAMES[cls] = found
    return found


def exact_key(value: object) -> Hashable:
    """A key that equals another exactly when the values are the same, not merely `==`:
    `-0.0` is not `0.0`, `2` is not `2.0`, `True` is not `1`, and `nan` matches `nan`.

    Used for op parameters in node keys, where Python's `==` would merge nodes that
    compute different things (or, for nan, never find a live node again). It runs for
    every node built, so it dispatches on the exact type before anything slower.
    """
    cls = type(value)
    if cls in _PLAIN_TYPES:
        return (cls, value)
    if cls is float and isinstance(value, float):  # isinstance narrows the type for mypy
        return (float, value.hex())
    if cls is tuple and isinstance(value, tuple):
        return (tuple, tuple([exact_key(item) for item in value]))
    if getattr(cls, "keyed_by_equality", False):
        return value  # variables, nodes, graphs: their own equality is already exact
    names = _field_names(cls)
    if names is not None:
        return (cls, tuple([exact_key(getattr(value, name)) for name in names]))
    if isinstance(value, complex):
        return (complex, value.real.hex(), value.imag.hex())
    if isinstance(value, frozenset):
        return (frozenset, tuple(sorted((exact_key(item) for item in value), key=repr)))
    if isinstance(value, Hashable):
        return (cls, value)
    raise TypeError(f"cannot use a {cls.__name__} ({value!r}) as an interned parameter")
