"""The output cache: a read-only command's stdout, stderr and exit code, replayed byte for byte
when the same command line runs again in the same place and nothing it read has changed.

Which runs qualify: the commands whose spec says `cacheable` (hotspot/commandspec.py; today analyze,
plan, diff, pmc, kernels, occupancy, report and export; read from the command index),
and any `--help`, that exited 0. A report or trace written to a file is kept with the
output and written again on a replay (atomically, as the command does), but only where the command
would write it: the target absent, or present with `--force`, and never a symlink. Commands that
start processes, install files or read the machine's state (collect, sweep, doctor, skill, cache)
never qualify. The key is the command line, the working
directory, the environment variables that change output (HOTSPOT_*, COLUMNS, locale...), whether
stdout/stderr are terminals and their sizes, and the interpreter; the entry holds the stat
signature of every file and folder the run read, side-file listings, and every module it loaded
outside the standard library. Progress lines are not recorded (a replay is instant).

This module runs before typer and the rest of hotspot are imported (hotspot/console.py): standard
library, hotspot.cache and the command index (hotspot/clihelp/index.py, generated data) only.
"""

from __future__ import annotations

import io
import marshal
import os
import sys
import time
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms)
if TYPE_CHECKING:  # annotations only: this module is the launcher's hit path
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

from hotspot.cache import deps, store
from hotspot.clihelp.index import COMMANDS
from hotspot.globalflags import COMPLETION_ENV, NO_CACHE  # completion: never cached

FORMAT = 2  # bump when the body layout below changes
CACHEABLE = tuple(name for name, (_, _, _, cacheable) in COMMANDS.items() if cacheable)
FORCE_FLAG = "--force"
HELP_FLAGS = ("--help", "-h")
# Environment variables that change what a command prints, besides every HOTSPOT_* one.
ENV_KEYS = ("COLUMNS", "LINES", "TERM", "NO_COLOR", "HOME", "LANG", "LC_ALL", "LC_CTYPE",
            "PYTHONIOENCODING", "PYTHONUTF8")
OUTPUT_LIMIT = 64 << 20  # bytes of stdout + stderr kept per run; a larger output is not cached


class Plan:
    """Where a command line's output is cached: the folder and the entry's file name."""

    __slots__ = ("folder", "name", "force", "key")

    def __init__(self, folder: str, name: str, force: bool, key: bytes = b"") -> None:
        self.folder, self.name, self.force, self.key = folder, name, force, key


def plan(argv: Sequence[str]) -> Plan | None:
    """Where this command line's output would be cached, or None when it is not cacheable."""
    end = list(argv).index("--") if "--" in argv else len(argv)
    head = list(argv[:end])
    if NO_CACHE in head or store.disabled_reason():
        return None
    if any(k.startswith(COMPLETION_ENV) for k in os.environ):
        return None
    words = [a for a in head if not a.startswith("-")]
    helping = any(a in HELP_FLAGS for a in head)
    if not helping and not (words and words[0] in CACHEABLE):
        return None
    loc = store.location(create=True)
    if not loc.usable:
        return None
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("HOTSPOT_") or k in ENV_KEYS)
    key = (FORMAT, store.runtime_identity(), _version(), os.getcwd(), list(argv), env,
           _terminal(1), _terminal(2))
    full_key = store.entry_key("out", key)
    return Plan(loc.path, store.name_of("out", full_key), FORCE_FLAG in head, full_key)


def _version() -> str:
    from hotspot._version import __version__

    return __version__


def _terminal(fd: int) -> tuple[bool, int, int]:
    try:
        if os.isatty(fd):
            size = os.get_terminal_size(fd)
            return True, size.columns, size.lines
    except OSError:
        pass
    return False, 0, 0


def replay(p: Plan) -> int | None:
    """Write the cached output and return its exit code; None on a miss (nothing written)."""
    body = store.read_entry(p.folder, p.name, key=p.key)
    if body is None:
        return None
    try:
        fmt, paths, sigs, listings, code, code_sigs, exit_code, out, err, files = marshal.loads(body)
        if fmt != FORMAT or not deps.unchanged(code, code_sigs) or not deps.unchanged(paths, sigs) \
                or not deps.listings_unchanged(listings):
            return None
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a miss
        return None
    for path, data in files:
        if not _rewrite(path, data, p.force):
            return None  # the command itself decides (and says) what to do with this target
    _emit(sys.stderr, err)
    _emit(sys.stdout, out)
    replayed: int | None = exit_code
    return replayed


def _rewrite(path: str, data: bytes, force: bool) -> bool:
    """Write a recorded output file again as the command would (hotspot/outfile.py, atomically,
    with the usual permissions); only where the command would write without complaint (absent,
    or a regular file and --force). False when it did not."""
    import stat

    from hotspot.outfile import replace_atomically

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError:
        return False
    if st is not None and (not force or not stat.S_ISREG(st.st_mode)):
        return False
    try:
        replace_atomically(path, lambda fh: fh.write(data))
    except OSError:
        return False
    return True


def _emit(stream: TextIO, data: bytes) -> None:  # a text stream with a .buffer
    if data:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()


class _Tee(io.BufferedIOBase):
    """A binary stream that writes through to `raw` and keeps a copy (up to OUTPUT_LIMIT)."""

    def __init__(self, raw: Any, skip: Callable[[], bool]) -> None:  # a binary stream
        super().__init__()
        self.raw_stream = raw
        self.skip = skip
        self.kept: list[bytes] = []
        self.size = 0
        self.overflow = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:  # bytes-like
        n = self.raw_stream.write(data)
        if not self.skip() and not self.overflow:
            self.size += len(data)
            if self.size > OUTPUT_LIMIT:
                self.overflow, self.kept = True, []
            else:
                self.kept.append(bytes(data))
        return len(data) if n is None else n

    def flush(self) -> None:
        self.raw_stream.flush()

    def fileno(self) -> int:
        n: int = self.raw_stream.fileno()
        return n

    def isatty(self) -> bool:
        tty: bool = self.raw_stream.isatty()
        return tty

    def close(self) -> None:  # the wrapped stream is not ours to close
        self.flush()


def _teed(stream: Any, skip: Callable[[], bool]) -> tuple[io.TextIOWrapper[Any], _Tee]:  # a text stream
    stream.flush()
    tee = _Tee(stream.buffer, skip)
    buffer: Any = tee  # a BufferedIOBase, which TextIOWrapper wraps
    wrapper = io.TextIOWrapper(buffer, encoding=stream.encoding, errors=stream.errors,
                               line_buffering=stream.line_buffering, write_through=True)
    return wrapper, tee


def run_and_store(p: Plan, run: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run the command with its output recorded; keep it when it succeeded and nothing it read
    was being modified while it ran."""
    from hotspot.diagnostics import PROGRESS

    started = time.time_ns()
    out, err = sys.stdout, sys.stderr
    if not (hasattr(out, "buffer") and hasattr(err, "buffer")):
        return run(argv)
    sys.stdout, tee_out = _teed(out, lambda: False)
    sys.stderr, tee_err = _teed(err, lambda: PROGRESS["writing"])
    try:
        with deps.recording() as read, deps.writes_recorded() as written:
            code = run(argv)
    finally:
        for wrapper in (sys.stdout, sys.stderr):
            try:
                wrapper.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = out, err
    if code == 0 and not (tee_out.overflow or tee_err.overflow):
        try:
            _store(p, read, written, started, b"".join(tee_out.kept), b"".join(tee_err.kept))
        except Exception:  # noqa: BLE001 - caching is never worth failing a command
            pass
    return code


def _store(p: Plan, read: set[object], written: list[str], started: int, out: bytes,
           err: bytes) -> None:
    files = []
    for path in dict.fromkeys(written):
        with deps.unrecorded(), open(path, "rb") as fh:
            data = fh.read(OUTPUT_LIMIT + 1)
        if len(data) > OUTPUT_LIMIT:
            return
        files.append((path, data))
    code = deps.code_files()
    code_sigs = deps.code_signatures(code)
    if not deps.code_loaded_unchanged(code, code_sigs):
        return
    paths, listings = deps.split(read, code)
    outputs = {path for path, _ in files}
    paths = [q for q in paths if q not in outputs]  # a file this run wrote is not an input of it
    sigs = deps.signatures(paths)
    if not deps.settled(sigs, started):
        return
    body = marshal.dumps((FORMAT, paths, sigs, listings, code, code_sigs, 0, out, err, files))
    store.write_entry(p.folder, p.name, body, key=p.key)
