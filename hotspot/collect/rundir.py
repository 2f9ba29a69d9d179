"""Run directories (never reused) and the run.json record that lives in each.

Every run gets its own directory: an explicit --output must be new or empty; the default
`./hotspot-runs/<UTC-timestamp>-<slug>/` gets a numeric suffix if the name is taken. The claim is
atomic (mkdir, then run.json created exclusively), so of several collects started together on one
--output exactly one proceeds. run.json is rewritten atomically after every step, so an
interrupted or crashed run still says what happened.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hotspot.collect.run_result import (
    DispatchOut,
    ErrorOut,
    IterationsOut,
    Kernel,
    Phase,
    PmcPasses,
    RocprofOut,
)
from hotspot.errors import HotspotError, InputError, os_fault
from hotspot.outfile import move_onto_claimed, write_atomically
from hotspot.record import record
from hotspot.result import dumps

RUNS_DIR = "hotspot-runs"
RUN_JSON = "run.json"
RUN_SCHEMA_VERSION = 1
SLUG_MAX = 40  # keeps directory names readable; kernel names can exceed 1 KB
_UNIQUE_TRIES = 1000


def utc_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def utc_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def kernel_slug(name: str) -> str:
    """`void ns::gemm_kernel<128, 64>(float*)` → `gemm-kernel`: the bare function name, lowercase."""
    base = re.sub(r"^(void|auto)\s+", "", name.strip())
    base = re.split(r"[<(]", base, maxsplit=1)[0] or base
    base = base.rsplit("::", 1)[-1] or base
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")
    return slug[:SLUG_MAX].strip("-") or "kernel"


def regex_slug(regex: str) -> str:
    return kernel_slug(re.sub(r"\\(.)", r"\1", regex).lstrip("^"))


def unique(path: Path) -> Path:
    if not path.exists():
        return path
    for n in range(2, _UNIQUE_TRIES):
        cand = path.with_name(f"{path.name}-{n}")
        if not cand.exists():
            return cand
    raise InputError(f"{path}: cannot find a free run directory name", "pass --output DIR")


_REUSE_HINT = ("pass a new --output DIR, or omit --output for a fresh ./hotspot-runs/<timestamp>-<kernel>/")


def _exists(path: Path) -> InputError:
    return InputError(f"{path}: exists and is not an empty directory; a run directory is never reused "
                      "or overwritten", _REUSE_HINT, code="run-dir-exists")


def check_explicit(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise _exists(path)


def fault(exc: OSError, path: Path, action: str) -> HotspotError:
    """An OSError while making or writing the run directory, classified (exit 3) when it is the
    machine's state (permissions, disk full, read-only file system); re-raised otherwise."""
    err = os_fault(exc, exc.filename or path, action)
    if err is None:
        raise exc
    err.hint = f"{err.hint}; or pass --output DIR on a writable file system"
    return err


def _mkdir_parents(parent: Path) -> list[Path]:
    """Create `parent` and its missing ancestors; the ones created, deepest first."""
    missing = []
    for p in (parent, *parent.parents):
        if p.exists() or p.is_symlink():
            break
        missing.append(p)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a directory should be
        raise InputError(f"{parent}: exists and is not a directory", _REUSE_HINT) from None
    except OSError as exc:
        _remove_empty(missing)
        raise fault(exc, parent, "cannot create the directory") from None
    return missing


def _remove_empty(dirs: list[Path]) -> None:
    """Take back directories this run created (deepest first) when it could not start in them."""
    for d in dirs:
        try:
            d.rmdir()
        except OSError:
            return


def _claim(path: Path, record: bytes) -> bool:
    """Create run.json exclusively: True for the one process that got `path`."""
    try:
        fd = os.open(path / RUN_JSON, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    except OSError as exc:
        raise fault(exc, path, "cannot create run.json") from None
    try:
        os.write(fd, record)
    except OSError as exc:
        os.close(fd)
        os.unlink(path / RUN_JSON)
        raise fault(exc, path / RUN_JSON, "cannot write") from None
    os.close(fd)
    return True


def create(path: Path, explicit: bool, record: bytes = b"{}") -> Path:
    """Make and claim the run directory (run.json holds `record` until the first save). An
    explicit path that another run holds is refused (exit 3) before anything is written in it; a
    run that cannot start (disk full, permissions) takes back the directories it made."""
    if explicit:
        check_explicit(path)  # before anything is created
    made = _mkdir_parents(path.parent)
    try:
        return _create(path, explicit, record, made)
    except HotspotError:
        _remove_empty(made)
        raise


def _create(path: Path, explicit: bool, record: bytes, made: list[Path]) -> Path:
    if explicit:
        try:
            os.mkdir(path)
            mine = True
        except FileExistsError:
            if not path.is_dir():
                raise _exists(path) from None
            mine = False  # an existing empty directory: whoever creates run.json first has it
        except OSError as exc:
            raise fault(exc, path, "cannot create the run directory") from None
        try:
            claimed = _claim(path, record)
        except HotspotError:
            if mine:
                _remove_empty([path])
            raise
        if not claimed:
            raise _exists(path)
        return path
    for _ in range(_UNIQUE_TRIES):
        path = unique(path)
        try:
            os.mkdir(path)  # atomic: two concurrent runs cannot both get it
        except FileExistsError:
            continue
        except OSError as exc:
            raise fault(exc, path, "cannot create the run directory") from None
        try:
            if _claim(path, record):
                return path
        except HotspotError:
            _remove_empty([path])
            raise
    raise InputError(f"{path}: cannot create a fresh run directory", "pass --output DIR")


def rename_unique(current: Path, wanted: Path) -> Path:
    """Move a run directory to `wanted` (or `wanted-2`, ...): the new name is claimed with mkdir
    first, so two runs naming themselves after the same kernel in the same second never collide
    (renaming a directory onto our own empty one replaces it atomically)."""
    for _ in range(_UNIQUE_TRIES):
        target = unique(wanted)
        try:
            os.mkdir(target)
        except FileExistsError:
            continue
        except OSError as exc:
            raise fault(exc, target, "cannot rename the run directory") from None
        try:
            move_onto_claimed(current, target)
        except OSError as exc:
            raise fault(exc, target, "cannot rename the run directory") from None
        return target
    raise InputError(f"{wanted}: cannot find a free run directory name", "pass --output DIR")


def write_file(path: Path, data: bytes | str) -> None:
    """Write one file of the run directory atomically (hotspot/outfile.py): a full disk leaves no
    truncated file behind, and the failure names the file (exit 3)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    write_atomically(path, lambda fh: fh.write(payload))


@record
class RunOptions:
    """run.json `options`: the collect options as given."""

    kernel: str | None
    skip: list[str]
    iterations: str | None
    target_cu: int
    se_mask: str  # hex
    simd_select: str  # hex
    buffer_size: int
    att: bool
    flags: bool
    timeout_s: float | None
    pmc: list[str]
    pmc_preset: str | None
    arch: str | None
    analyze: bool


def _unset() -> Any:  # a field(); the annotation of the field it declares is its type
    # A run.json part the run has not reached: an init=False field never assigned is not in the
    # instance's __dict__, which is what orjson writes, so run.json gains each key when (and in
    # the order) the run sets it, as it always has.
    return field(default=None, init=False)


@record(frozen=False)
class RunDoc:
    """run.json (its key order is this field order, then the parts in the order the run set them)."""

    schema_version: int
    status: str
    run_dir: str
    command: list[str]
    cwd: str
    env_added: dict[str, str]
    rocprofv3: RocprofOut
    decoder: str | None
    started_at: str
    options: RunOptions
    phases: list[Phase]
    warnings: list[str]
    kernel: Kernel | None
    pmc_plan: list[list[str]] | None = _unset()
    iterations: IterationsOut | None = _unset()
    input_yaml: str | None = _unset()
    dispatches: list[DispatchOut] | None = _unset()
    chosen_dispatch: DispatchOut | None = _unset()
    pmc: PmcPasses | None = _unset()
    analysis_file: str | None = _unset()
    finished_at: str | None = _unset()
    elapsed_ns: int | None = _unset()
    error: ErrorOut | None = _unset()


@record
class RunChoice:
    """What a run.json says the run chose: the kernel and the traced iterations (a sweep's retry
    of an empty capture traces the same ones)."""

    kernel: Kernel | None = None
    iterations: IterationsOut | None = None


def read_choice(run_json: Path) -> RunChoice:
    import orjson

    from hotspot.decode import from_plain

    return from_plain(RunChoice, orjson.loads(run_json.read_bytes()), source=run_json,
                      hint="a run.json written by hotspot collect")


class RunRecord:
    """run.json: a RunDoc persisted atomically on every `save()`."""

    def __init__(self, run_dir: Path, doc: RunDoc) -> None:
        self.run_dir = run_dir
        self.doc = doc
        self._t0 = time.monotonic_ns()

    def move(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.doc.run_dir = str(run_dir)

    def save(self) -> None:
        write_file(self.run_dir / RUN_JSON, dumps(self.doc))

    def finish(self, status: str, error: ErrorOut | None = None) -> None:
        self.doc.status = status
        self.doc.finished_at = utc_iso()
        self.doc.elapsed_ns = time.monotonic_ns() - self._t0
        if error is not None:
            self.doc.error = error
        self.save()
