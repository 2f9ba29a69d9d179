"""Cache entries on disk: one file per entry in `$XDG_CACHE_HOME/hotspot` (else ~/.cache/hotspot).

An entry is `MAGIC | blake2b(rest) | len(key) | key | body`, `rest` being everything after the
digest; a file whose digest does not match (truncated, bit rot, a foreign file) is ignored and
rebuilt, never trusted. The entry carries its full key (the text its name is a hash of): an entry
file copied or renamed over another key's name is a miss, never that key's value. Only a regular
file is read (a FIFO or a device planted in the folder is never opened for reading), and at most
the folder's size bound of it. Writes go to a temporary file in the same
folder and are renamed into place, so concurrent processes only ever see whole entries; the last
writer of a key wins, which is harmless since equal keys hold equal results. The folder is kept
under a size bound by evicting the least recently used entries (a hit refreshes the entry's mtime).
The cache is off with `HOTSPOT_CACHE=off` (or `--no-cache` on any command), and refused when the
folder is not a private directory of the current user (entries are unpickled).
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~8 ms with re, on every replay)
if TYPE_CHECKING:
    from typing import BinaryIO

try:  # the C module alone: hashlib would load OpenSSL (~4 ms) on the launcher's hit path
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

CACHE_ENV = "HOTSPOT_CACHE"        # "off", "0", "no" or "false" turn the cache off
MAX_MB_ENV = "HOTSPOT_CACHE_MAX_MB"  # size bound in MiB (default below)
OFF_VALUES = ("off", "0", "no", "false")
DEFAULT_MAX_BYTES = 512 << 20     # a 32 MB capture's derived data is ~0.1 MB, its output 0.1-1 MB
LOW_WATER = 0.8                    # eviction frees down to this fraction of the bound (fewer scans)
STALE_TMP_S = 3600                 # a temporary file older than this is from a crashed writer
MAGIC = b"HSPCACHE\x02"            # bump the last byte when the body layout changes
DIGEST_SIZE = 32
KEY_LENGTH = 4                     # bytes of the key's length (little-endian) before the key
ENTRY_SUFFIX = ".entry"
TMP_SUFFIX = ".tmp"                 # as hotspot/outfile.py names its temporary files

# --no-cache (any command) sets this for the process; the launcher reads argv itself
DISABLED = {"on": False}


class Location:
    """The cache folder, whether it may be used, and why not ("" when usable)."""

    __slots__ = ("path", "usable", "reason")

    def __init__(self, path: str, usable: bool, reason: str) -> None:
        self.path, self.usable, self.reason = path, usable, reason


def cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not base or not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hotspot")


def disabled_reason() -> str:
    """Why the cache is off for this process ("" when it is on)."""
    if DISABLED["on"]:
        return "--no-cache"
    if os.environ.get(CACHE_ENV, "").strip().lower() in OFF_VALUES:
        return f"{CACHE_ENV}={os.environ[CACHE_ENV]}"
    return ""


def max_bytes() -> int:
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    try:
        mb = float(raw) if raw else None
    except ValueError:
        mb = None
    if mb is None or not mb >= 0 or mb == float("inf"):
        return DEFAULT_MAX_BYTES
    return int(mb * (1 << 20))


def location(create: bool = False) -> Location:
    """The cache folder and whether it may be used: it must be a directory owned by this user and
    writable by nobody else (a folder another user can write could hand us entries to unpickle)."""
    path = cache_root()
    try:
        if create:
            os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except FileNotFoundError:
        return Location(path, False, "not created yet")
    except OSError as exc:
        return Location(path, False, f"cannot create or read it ({exc.strerror or exc})")
    if not stat.S_ISDIR(st.st_mode):
        return Location(path, False, "not a directory (a symlink or a file)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return Location(path, False, "owned by another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Location(path, False, "writable by other users (chmod 700 it)")
    return Location(path, True, "")


def entry_key(kind: str, key_material: object) -> bytes:
    """The full key of the entry for `key_material` (nested tuples/lists of str, int, float,
    bool, None), as stored in the entry: repr(), which is deterministic for those (marshal is not:
    its bytes depend on string interning and reference counts)."""
    return f"{kind}:{key_material!r}".encode("utf-8", "backslashreplace")


def name_of(kind: str, key: bytes) -> str:
    return f"{kind}-{blake2b(key, digest_size=20).hexdigest()}{ENTRY_SUFFIX}"


def read_entry(folder: str, name: str, accept: Callable[[BinaryIO], bool] | None = None,
               key: bytes | None = None) -> memoryview | None:
    """The body of an entry, or None when absent, damaged, not a regular file, or (when `key` is
    given) made for another key. A hit refreshes its LRU time. `accept` reads the start of the
    body first, unverified (so it may only turn the entry down, which costs a miss), and returns
    False to stop before the rest is read: a large entry that will not be used is not read."""
    from hotspot.cache.deps import unrecorded

    path = os.path.join(folder, name)
    head = len(MAGIC) + DIGEST_SIZE
    try:
        with unrecorded():
            # O_NONBLOCK: opening a FIFO planted here returns at once (and is then refused by type)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            with open(fd, "rb") as fh:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes():
                    return None
                fh.seek(head)
                stored = fh.read(KEY_LENGTH)
                key_len = int.from_bytes(stored, "little")
                if len(stored) < KEY_LENGTH or head + KEY_LENGTH + key_len > st.st_size:
                    return None
                stored_key = fh.read(key_len)
                if key is not None and stored_key != key:
                    return None  # another key's entry under this name: a miss
                if accept is not None and not accept(fh):
                    return None
                fh.seek(0)
                data = fh.read(st.st_size)
    except OSError:
        return None
    if len(data) < head + KEY_LENGTH or not data.startswith(MAGIC):
        return None
    rest = memoryview(data)[head:]
    if blake2b(rest, digest_size=DIGEST_SIZE).digest() != data[len(MAGIC):head]:
        return None
    body = rest[KEY_LENGTH + key_len:]
    try:
        os.utime(path)
    except OSError:
        pass
    return body


class _Hashed:
    """A write-only file that hashes what goes through it (an entry's body as it is written)."""

    __slots__ = ("fh", "hash", "size")

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.hash, self.size = fh, blake2b(digest_size=DIGEST_SIZE), 0

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        self.size += len(data)
        return self.fh.write(data)


def write_entry(folder: str, name: str, body: bytes,
                stream: Callable[[BinaryIO | _Hashed], object] | None = None, key: bytes = b"") -> bool:
    """Write an entry atomically, then keep the folder under its bound. False when it could not
    be written (full disk, read-only home): the cache is an optimization, never an error.
    `key` is the entry's full key (stored in it, checked on read). `stream`, when given, writes
    the rest of the body after `body` into the file, so a large value is never held as bytes (an
    exception it raises propagates, nothing written)."""
    limit = max_bytes()
    if len(MAGIC) + DIGEST_SIZE + len(body) > limit * LOW_WATER:
        return False
    from hotspot.cache.deps import unrecorded
    from hotspot.outfile import replace_atomically

    def write(fh: BinaryIO) -> None:
        fh.write(MAGIC)
        fh.write(bytes(DIGEST_SIZE))  # the digest, once the body is written
        out = _Hashed(fh)
        out.write(len(key).to_bytes(KEY_LENGTH, "little"))
        out.write(key)
        out.write(body)
        if stream is not None:
            stream(out)
        fh.seek(len(MAGIC))
        fh.write(out.hash.digest())
        if len(MAGIC) + DIGEST_SIZE + out.size > limit * LOW_WATER:
            raise _TooLarge

    try:
        with unrecorded():  # not an output of the command being recorded (cache/output.py)
            replace_atomically(os.path.join(folder, name), write, private=True)
    except (OSError, _TooLarge):
        return False
    evict(folder, limit)
    return True


class _TooLarge(Exception):
    """An entry over the folder's bound: not written."""


class Entry:
    __slots__ = ("name", "size", "mtime")

    def __init__(self, name: str, size: int, mtime: float) -> None:
        self.name, self.size, self.mtime = name, size, mtime


def entries(folder: str) -> tuple[list[Entry], list[Entry]]:
    """(entries, temporary files) in the folder; anything else there is not ours and left alone."""
    from hotspot.cache.deps import unrecorded

    found: list[Entry] = []
    temps: list[Entry] = []
    try:
        with unrecorded(), os.scandir(folder) as it:
            for e in it:
                if not (e.name.endswith(ENTRY_SUFFIX) or e.name.endswith(TMP_SUFFIX)):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                item = Entry(e.name, st.st_size, st.st_mtime)
                (found if e.name.endswith(ENTRY_SUFFIX) else temps).append(item)
    except OSError:
        pass
    return found, temps


def evict(folder: str, limit: int) -> int:
    """Remove least recently used entries until the folder holds at most LOW_WATER x `limit`
    (only once it exceeds `limit`), and temporary files a crashed writer left. Returns how many
    files were removed. Safe beside other processes: a file already gone is skipped."""
    found, temps = entries(folder)
    removed = 0
    now = time.time()
    for t in temps:
        if now - t.mtime > STALE_TMP_S and _unlink(os.path.join(folder, t.name)):
            removed += 1
    total = sum(e.size for e in found)
    if total <= limit:
        return removed
    for e in sorted(found, key=lambda e: (e.mtime, e.name)):
        if total <= limit * LOW_WATER:
            break
        if _unlink(os.path.join(folder, e.name)):
            removed += 1
        total -= e.size
    return removed


def clear(folder: str) -> tuple[int, int]:
    """Remove every entry and temporary file; (files removed, bytes freed)."""
    found, temps = entries(folder)
    n = freed = 0
    for e in found + temps:
        if _unlink(os.path.join(folder, e.name)):
            n += 1
            freed += e.size
    return n, freed


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def runtime_identity() -> tuple[str, str]:
    """The interpreter an entry was made by: pickles and outputs are not shared across them."""
    return sys.version, sys.executable
