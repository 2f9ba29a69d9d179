"""Derived data kept across processes: `cached(kind, key, compute, warnings)` returns what
`compute` returned the last time it ran with the same key, as long as nothing it read has changed
(every file and folder it read, and the code that computed it), else computes and stores it.

The value and the warnings `compute` added are pickled; the entry's digest is checked before it is
unpickled (hotspot/cache/store.py), and a value that fails to load is recomputed. Results whose
inputs were modified moments before the computation are not stored (deps.RACY_NS), nor results of
a process whose code files changed since it started (deps.code_loaded_unchanged). The key holds
hotspot's version and the interpreter besides `key`.
"""

from __future__ import annotations

import marshal
import time
from collections.abc import Callable
from typing import BinaryIO, TypeVar, cast

from hotspot.cache import deps, store

T = TypeVar("T")
FORMAT = 2  # bump when the body layout below changes
# An entry's body: the length of its head (HEAD_LENGTH bytes, little-endian), the head (marshal:
# format, largest file read, what it depends on) and the pickled value, written straight to the
# file (a large analysis is never held as bytes twice) and not read when the head turns it down.
HEAD_LENGTH = 8


def cached(kind: str, key: object, compute: Callable[[list[str]], T], warnings: list[str],
           size_cap: int | None = None) -> T:
    """`compute(warnings_out)` memoized on disk under (kind, key); `key` (nested tuples of str,
    int, float, bool and None) names everything besides files that the result depends on (the
    options). `size_cap` is the --max-file-mb limit in bytes: it is not part of the key (a result
    does not depend on it), but an entry that read a larger file is not used under it, so the
    refusal still happens."""
    if store.disabled_reason():
        return compute(warnings)
    loc = store.location(create=True)
    if not loc.usable:
        return compute(warnings)
    full_key = store.entry_key(kind, (FORMAT, store.runtime_identity(), _version(), kind, key))
    name = store.name_of(kind, full_key)
    body = store.read_entry(loc.path, name, lambda fh: _head_ok(fh, size_cap), key=full_key)
    if body is not None:
        hit = _load(body, size_cap)
        if hit is not None:
            value, read, added_before = hit
            deps.note(read)  # an enclosing recording (the output cache, the session) needs them
            warnings.extend(added_before)
            return cast(T, value)  # what compute() gave when it was stored
    started = time.time_ns()
    added: list[str] = []
    with deps.recording() as read:
        value = compute(added)
    warnings.extend(added)
    _store(loc.path, name, full_key, value, added, read, started)
    return value


def _version() -> str:
    """hotspot's version: an upgrade invalidates every entry even where its files could not be
    checked."""
    from hotspot._version import __version__

    return __version__


def _head_ok(fh: BinaryIO, size_cap: int | None) -> bool:
    """The entry's head, read before the rest: of this format, and from files under the cap."""
    try:
        size = int.from_bytes(fh.read(HEAD_LENGTH), "little")
        fmt, largest = marshal.loads(fh.read(size))[:2]
    except Exception:  # noqa: BLE001 - damaged: read on, the digest decides
        return True
    return fmt == FORMAT and not (size_cap and largest > size_cap)


def _load(body: memoryview, size_cap: int | None) -> tuple[object, list[object], list[str]] | None:
    try:
        size = int.from_bytes(body[:HEAD_LENGTH], "little")
        fmt, largest, paths, sigs, listings, code, code_sigs = marshal.loads(
            body[HEAD_LENGTH:HEAD_LENGTH + size])
        if fmt != FORMAT or (size_cap and largest > size_cap):
            return None
        if not deps.unchanged(code, code_sigs) or not deps.unchanged(paths, sigs) \
                or not deps.listings_unchanged(listings):
            return None
        import pickle  # here, not at import: with the cache off nothing is pickled

        value, added = pickle.loads(body[HEAD_LENGTH + size:])
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a miss, never an error
        return None
    return value, paths + [tuple(x) for x in listings], added


def _store(folder: str, name: str, key: bytes, value: object, added: list[str], read: set[object],
           started: int) -> None:
    code = deps.code_files()
    code_sigs = deps.code_signatures(code)
    if not deps.code_loaded_unchanged(code, code_sigs):
        return
    paths, listings = deps.split(read, code)
    sigs = deps.signatures(paths)
    if not deps.settled(sigs, started):
        return
    try:
        import pickle

        head = marshal.dumps((FORMAT, deps.largest_file(paths), paths, sigs, listings, code,
                              code_sigs))
        store.write_entry(folder, name, len(head).to_bytes(HEAD_LENGTH, "little") + head,
                          lambda fh: pickle.dump((value, added), fh,
                                                 protocol=pickle.HIGHEST_PROTOCOL), key=key)
    except Exception:  # noqa: BLE001 - a value that does not pickle is simply not cached
        return
