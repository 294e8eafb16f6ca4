"""A small generic name -> object registry (as lm-eval's `registry.py`).

Registering a name twice is an error; looking up an unknown name suggests the closest
registered ones, so a typo on the command line gets a useful answer.
"""
from __future__ import annotations

import difflib
import weakref
from typing import Any, Generic, Iterator, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """Unknown or duplicate registry name.  `str()` gives a readable message."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0]) if self.args else ""


_ALL: "weakref.WeakSet[Registry[Any]]" = weakref.WeakSet()  # every registry, for `snapshot_registries` / `restore`


def snapshot_registries() -> list[tuple["Registry[Any]", dict[str, Any]]]:
    """Every registry's contents now (a plug-in's import is undone with `restore`)."""
    return [(r, dict(r._items)) for r in list(_ALL)]


def restore(saved: list[tuple["Registry[Any]", dict[str, Any]]]) -> list[str]:
    """Put every registry `snapshot_registries` saw back as it was; returns the "kind name" of each
    registration undone.  (A registry made since is left alone: its module stays imported,
    with what it registered itself.)"""
    undone: list[str] = []
    for reg, items in saved:
        undone += [f"{reg.kind} {n!r}" for n in reg._items if n not in items or reg._items[n] is not items[n]]
        reg._items.clear()
        reg._items.update(items)
    return undone


class Registry(Generic[T]):
    """Names to objects, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        _ALL.add(self)

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


def entry_point_table(group: str) -> dict[str, Any]:
    """Name -> `importlib.metadata.EntryPoint` of `group`, by name (not loaded: the caller loads
    the one it needs, so a plug-in that is not used costs nothing and cannot break the command)."""
    from importlib.metadata import entry_points

    table: dict[str, Any] = {}
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        table.setdefault(ep.name, ep)  # the same name twice (two installs): the first on the path, as imports
    return table


def load_entry_points(group: str, what: str) -> list[str]:
    """Import every entry point of `group`, one at a time; returns the names loaded.

    A plug-in is someone else's code: one that fails to import (or registers a name twice),
    raises `SystemExit` or `KeyboardInterrupt` included, is skipped with one warning line
    naming it and the code ``plugin_broken``, so a broken package in the environment never
    takes every phybench command down.  Whatever it registered before failing is rolled back
    (every `Registry` as it was before its import): the tasks or metrics it would have added
    are then unknown, which their own lookups say.
    """
    import sys
    from importlib.metadata import entry_points

    loaded = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        saved = snapshot_registries()
        try:
            ep.load()
        # SystemExit and KeyboardInterrupt too: a plug-in that calls sys.exit() at import must not
        # end every phybench command silently with its status.
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - foreign code's failure
            undone = restore(saved)  # half a registration is none: what it registered is removed
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            rolled = f" (its registrations rolled back: {', '.join(undone)[:200]})" if undone else ""
            print(f"phybench: warning [plugin_broken]: {what} plug-in {ep.name!r} ({ep.value}) is skipped: "
                  f"{reason}{rolled}", file=sys.stderr)
            continue
        loaded.append(ep.name)
    return loaded
