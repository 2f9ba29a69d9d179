"""One command, one read of each capture file.

A command runs inside `capture_session()` (hotspot/commands/_run.py does it for every command). While
it is open, the capture readers memoize what they parsed (code tables, dispatch listings, occupancy
traces, folder listings) by path, and bytes of files a later step asked to keep (`keep`) are kept
when the wave pass reads them, so `report` and `export` never open a capture file twice. The cache
lives exactly as long as the command: nothing is process-wide, nothing outlives the session.
Outside a session (library use, tests) every call reads afresh.

The session also remembers which files the command read (every open for reading in this process,
seen through the audit hook of hotspot/cache/deps.py, plus the wave files handed to worker
processes), so that a writer can refuse to replace an input: `report -o <the capture's code.json> --force` must not
destroy the capture (it hands them to hotspot/outfile.py's `INPUTS_READ`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

T = TypeVar("T")


class CaptureSession:
    def __init__(self) -> None:
        self.memo: dict[tuple[str, str], object] = {}
        self.keep: set[str] = set()
        self.kept: dict[str, bytes] = {}
        # absolute paths read or listed, and side-file listings (hotspot/cache/deps.py)
        self.inputs: set[object] = set()


_current: ContextVar[CaptureSession | None] = ContextVar("hotspot_capture_session", default=None)


@contextmanager
def capture_session() -> Iterator[CaptureSession]:
    """Open a session for one command (nested calls share the outer one)."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    from hotspot.cache.deps import one_command, recording

    from hotspot.outfile import INPUTS_READ

    session = CaptureSession()
    token = _current.set(session)
    try:
        with recording() as session.inputs, one_command():
            inputs_token = INPUTS_READ.set(session.inputs)
            try:
                yield session
            finally:
                INPUTS_READ.reset(inputs_token)
    finally:
        _current.reset(token)


def memoized(kind: str, key: str, build: Callable[[], T]) -> T:
    """`build()` once per (kind, key) within the session; always afresh outside one."""
    session = _current.get()
    if session is None:
        return build()
    from hotspot.cache.deps import note, recording

    slot = (kind, key)
    if slot not in session.memo:
        with recording() as read:
            value = build()
        session.memo[slot] = (value, read)
        return value
    value, read = cast("tuple[T, Any]", session.memo[slot])  # stored above for this slot
    note(read)  # a later step that records what it depends on read these too
    return value


def share(kind: str, key: str, value: object, read: Iterable[str] = ()) -> None:
    """Hand `value` to a later step of this command (nothing is kept outside a session); `read`:
    the files it was made from, recorded as read by the step that takes it (the result cache's
    dependencies)."""
    session = _current.get()
    if session is not None:
        session.memo[(kind, key)] = (value, set(read))


def shared(kind: str, key: str) -> object | None:
    """What an earlier step of this command `share`d under (kind, key), else None."""
    session = _current.get()
    if session is None:
        return None
    got = session.memo.get((kind, key))
    if not isinstance(got, tuple):
        return None
    from hotspot.cache.deps import note

    note(got[1])
    value: object = got[0]
    return value


def keep_bytes(paths: Iterable[str]) -> None:
    """Ask that the bytes of these files be kept when something reads them in this session."""
    session = _current.get()
    if session is not None:
        session.keep.update(paths)


def remember_bytes(path: str, data: bytes) -> None:
    session = _current.get()
    if session is not None and path in session.keep:
        session.kept[path] = data


def kept_paths() -> set[str]:
    """The files whose bytes this session keeps or holds (their reads go through `read_capped`)."""
    session = _current.get()
    return session.keep | session.kept.keys() if session is not None else set()


def kept_bytes(path: str) -> bytes | None:
    """Bytes kept for `path` in this session (taken out: each is handed back once)."""
    session = _current.get()
    return session.kept.pop(path, None) if session is not None else None


def note_inputs(paths: Iterable[str]) -> None:
    """Record files read on this command's behalf by another process (the wave pass's workers)."""
    from hotspot.cache.deps import note

    note(paths)
