"""A small generic name -> object registry (as lm-eval's `registry.py`).

Registering a name twice is an error; looking up an unknown name suggests the closest
registered ones, so a typo on the command line gets a useful answer.
"""
from __future__ import annotations

import difflib
from typing import Generic, Iterator, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """Unknown or duplicate registry name.  `str()` gives a readable message."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Names to objects, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        if name in self._items:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> T:
        """Remove a name (temporary registrations: tests, notebooks)."""
        try:
            return self._items.pop(name)
        except KeyError:
            raise RegistryError(f"{self.kind} {name!r} is not registered") from None

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._items), n=3, cutoff=0.5)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            known = ", ".join(self._items) or "none"
            raise RegistryError(
                f"unknown {self.kind} {name!r}{hint} (known: {known})"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())


def load_entry_points(group: str, what: str) -> list[str]:
    """Import every entry point of `group`, one at a time; returns the names loaded.

    A plug-in is someone else's code: one that fails to import (or registers a name twice)
    is skipped with one warning line naming it and the code ``plugin_broken``, so a broken
    package in the environment never takes every phybench command down; the tasks or metrics
    it would have added are then unknown, which their own lookups say.
    """
    import sys
    from importlib.metadata import entry_points

    loaded = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            ep.load()
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code is the plug-in's
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            print(f"phybench: warning [plugin_broken]: {what} plug-in {ep.name!r} ({ep.value}) is skipped: {reason}",
                  file=sys.stderr)
            continue
        loaded.append(ep.name)
    return loaded
