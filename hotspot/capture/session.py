"""One command, one read of each capture file.

A command runs inside `capture_session()` (hotspot/commands/_run.py does it for every command). While
it is open, the capture readers memoize what they parsed (code tables, dispatch listings, occupancy
traces, folder listings) by path, and bytes of files a later step asked to keep (`keep`) are kept
when the wave pass reads them, so `report` and `export` never open a capture file twice. The cache
lives exactly as long as the command: nothing is process-wide, nothing outlives the session.
Outside a session (library use, tests) every call reads afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


class CaptureSession:
    def __init__(self) -> None:
        self.memo: dict[tuple[str, str], object] = {}
        self.keep: set[str] = set()
        self.kept: dict[str, bytes] = {}


_current: ContextVar[CaptureSession | None] = ContextVar("hotspot_capture_session", default=None)


@contextmanager
def capture_session() -> Iterator[CaptureSession]:
    """Open a session for one command (nested calls share the outer one)."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    session = CaptureSession()
    token = _current.set(session)
    try:
        yield session
    finally:
        _current.reset(token)


def memoized(kind: str, key: str, build: Callable[[], T]) -> T:
    """`build()` once per (kind, key) within the session; always afresh outside one."""
    session = _current.get()
    if session is None:
        return build()
    slot = (kind, key)
    if slot not in session.memo:
        session.memo[slot] = build()
    return session.memo[slot]  # type: ignore[return-value]


def keep_bytes(paths: Iterable[str]) -> None:
    """Ask that the bytes of these files be kept when something reads them in this session."""
    session = _current.get()
    if session is not None:
        session.keep.update(paths)


def remember_bytes(path: str, data: bytes) -> None:
    session = _current.get()
    if session is not None and path in session.keep:
        session.kept[path] = data


def kept_bytes(path: str) -> bytes | None:
    """Bytes kept for `path` in this session (taken out: each is handed back once)."""
    session = _current.get()
    return session.kept.pop(path, None) if session is not None else None
