"""The MCP server's one bounded memory: a thread-safe least-recently-used map (the remembered
answers, the documents held for paging, the first pages cut from them)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def _one(_: object) -> int:
    return 1


class Lru(Generic[K, V]):
    """Values by key, the least recently used dropped while their sizes sum over `limit`; `size`
    measures a value (default 1: the limit is a count). A value larger than the limit is not kept
    (nor does it displace anything)."""

    def __init__(self, limit: int, size: Callable[[V], int] = _one) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size
        self._limit = limit
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value (now the most recently used), None when not kept."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        size = self._size(value)
        if size > self._limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= self._size(old)
            self._items[key] = value
            self._total += size
            while self._total > self._limit:
                _, dropped = self._items.popitem(last=False)
                self._total -= self._size(dropped)

    def pop(self, key: K) -> V | None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= self._size(old)
            return old

    def __len__(self) -> int:
        return len(self._items)
