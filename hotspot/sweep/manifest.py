"""The sweep directory's `sweep.json`: per-entry state, written atomically under a file lock.

Every read-modify-write happens inside `locked(dir)`: a POSIX record lock (fcntl.lockf, which NFS
and Lustre honour across nodes, unlike flock on some mounts) on `sweep.lock`, then the document is
read, changed, written to a temporary file in the same directory, fsynced and renamed over
`sweep.json`. Readers therefore always see a complete document, and workers on any number of
processes or nodes claim each entry exactly once.

Entry states: pending, running (host, GPU, pid, worker, start), done, failed (exit code, reason,
log), empty, timed-out, interrupted. Paths inside the manifest are relative to the sweep directory
so that it reads the same from every node and after being copied.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import orjson

from hotspot.collect.device_lock import hostname as hostname  # one definition: locks and workers agree
from hotspot.errors import InputError
from hotspot.outfile import write_atomically
from hotspot.decode import from_plain
from hotspot.sweep_records import (  # noqa: F401  (the manifest's records, named here for its readers)
    AttSettings as AttSettings, EntryState as EntryState, EntryStatus as EntryStatus, LateResult as LateResult, Manifest as Manifest,
    Recipe as Recipe, RecipesRef as RecipesRef, Requeued as Requeued, RunOptions as RunOptions,
    SlurmJob as SlurmJob, WorkerInfo as WorkerInfo, WorkerStatus as WorkerStatus)

MANIFEST = "sweep.json"
LOCK = "sweep.lock"
KIND = "hotspot-sweep"
MANIFEST_VERSION = 1
STATES = tuple(EntryStatus)
FINAL_STATES = (EntryStatus.DONE, EntryStatus.FAILED, EntryStatus.EMPTY, EntryStatus.TIMED_OUT,
                EntryStatus.INTERRUPTED)
RETRYABLE = (EntryStatus.FAILED, EntryStatus.EMPTY, EntryStatus.TIMED_OUT, EntryStatus.INTERRUPTED)
# A worker on another host is presumed gone when its heartbeat is this old. Workers beat every
# HEARTBEAT_S; the margin covers a loaded node and a slow shared filesystem.
HEARTBEAT_S = 15.0
# A manifest holds a few KB per entry and attempt; this is far above any real library's sweep.
MAX_MANIFEST_BYTES = 256 << 20
STALE_S = 180.0


def utc_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def worker_id(pid: int | None = None) -> str:
    return f"{hostname()}:{pid or os.getpid()}"


def read_regular(path: Path, limit: int, too_large: str = "give the file hotspot wrote") -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Anything else (a FIFO, a device, a
    socket) is refused before it is opened for reading, so no read can block or never end; the
    open is non-blocking and re-checked in case the name was swapped in between. `too_large` is
    the fix said for a file over the limit."""
    st = os.stat(path)  # FileNotFoundError / PermissionError: the caller's
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file ({_kind(st.st_mode)})",
                         "give the real file; special files are never read")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: not a regular file ({_kind(st.st_mode)})",
                             "give the real file; special files are never read")
        if st.st_size > limit:
            raise InputError(f"{path}: {st.st_size} bytes, more than the {limit >> 20} MiB a sweep file may hold",
                             too_large)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)[:limit + 1]
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def read(sweep_dir: Path) -> Manifest:
    """The manifest as it is now (no lock: the rename makes every read see a whole document)."""
    path = Path(sweep_dir) / MANIFEST
    try:
        doc = orjson.loads(read_regular(path, MAX_MANIFEST_BYTES))
    except FileNotFoundError:
        raise InputError(f"{path}: no sweep manifest here",
                         "give the directory `hotspot sweep` created (it holds sweep.json)") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"{path}: unreadable sweep manifest: {exc}",
                         "restore it from the workers' logs or start a new sweep with --output") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("entries"), list):
        raise InputError(f"{path}: not a hotspot sweep manifest (field 'kind' is not {KIND!r})",
                         "give the directory `hotspot sweep` created")
    return from_plain(Manifest, doc, source=path,
                      hint="restore it from the workers' logs or start a new sweep with --output")


def write(sweep_dir: Path, doc: Manifest) -> None:
    doc.updated_at = utc_iso()
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    write_atomically(Path(sweep_dir) / MANIFEST, lambda fh: fh.write(data), durable=True,
                     action="cannot write the sweep manifest")


@contextmanager
def lock(sweep_dir: Path) -> Iterator[None]:
    fd = os.open(Path(sweep_dir) / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


@contextmanager
def locked(sweep_dir: Path) -> Iterator[Manifest]:
    """Read the manifest under the lock, let the caller change it, write it back atomically."""
    with lock(sweep_dir):
        doc = read(sweep_dir)
        yield doc
        write(sweep_dir, doc)


def new_document(recipes: RecipesRef, entries: list[EntryState], options: RunOptions) -> Manifest:
    now = utc_iso()
    return Manifest(MANIFEST_VERSION, KIND, now, now, recipes, options, None, {}, entries, [])


def set_state(entry: EntryState, state: EntryStatus, **fields: object) -> None:
    assert state in STATES, state
    entry.state = state
    for name, value in fields.items():
        if not hasattr(entry, name):
            raise AttributeError(f"EntryState has no field {name!r}")
        setattr(entry, name, value)


def requeue(entry: EntryState, why: str) -> None:
    """Back to pending; the previous outcome stays in `history`."""
    if entry.state != EntryStatus.PENDING:
        e = entry
        entry.history.append(Requeued(
            e.state, e.attempts, e.host, e.gpu, e.started_at, e.finished_at, e.exit_code, e.reason, e.log,
            e.run_dir, e.plan_json, e.report_html, e.summary.dispatch if e.summary else None, why, utc_iso()))
    set_state(entry, EntryStatus.PENDING, host=None, gpu=None, device=None, pid=None, worker=None, started_at=None,
              finished_at=None, elapsed_s=None, exit_code=None, reason=None, log=None, run_dir=None,
              report_html=None, plan_json=None, kernel=None, summary=None, att_attempts=[], warnings=[])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purpose (a killed worker whose parent has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def worker_gone(doc: Manifest, wid: str | None, now: float | None = None) -> bool:
    """Same host: its pid is dead. Another host: its heartbeat is older than STALE_S."""
    if not wid:
        return True
    host, _, pid = wid.rpartition(":")
    if host == hostname() and pid.isdigit():
        return not pid_alive(int(pid))
    w = doc.workers.get(wid)
    beat = w.heartbeat_unix if w else None
    return beat is None or (now or time.time()) - beat > STALE_S


def reclaim_stale(doc: Manifest) -> list[str]:
    """Entries `running` under a worker that is gone become `interrupted` (a rerun or a Slurm
    requeue re-queues them). Returns their names."""
    names = []
    now = time.time()
    for e in doc.entries:
        if e.state == EntryStatus.RUNNING and worker_gone(doc, e.worker, now):
            set_state(e, EntryStatus.INTERRUPTED, finished_at=utc_iso(), exit_code=None,
                      reason=f"its worker {e.worker} stopped without finishing it (killed, node lost)")
            names.append(e.name)
    for wid, w in doc.workers.items():
        if w.state == WorkerStatus.RUNNING and worker_gone(doc, wid, now):
            w.state = WorkerStatus.GONE
    return names


def counts(doc: Manifest) -> dict[str, int]:
    # every state (0 when none is in it), then any state outside STATES in the order first seen
    return {**dict.fromkeys(STATES, 0), **Counter(e.state for e in doc.entries)}

