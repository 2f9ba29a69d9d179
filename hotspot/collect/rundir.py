"""Run directories (never reused) and the run.json record that lives in each.

Every run gets its own directory: an explicit --output must be new or empty; the default
`./hotspot-runs/<UTC-timestamp>-<slug>/` gets a numeric suffix if the name is taken. run.json is
rewritten atomically after every step, so an interrupted or crashed run still says what happened.
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

from hotspot.errors import InputError
from hotspot.result import JsonObject, dumps

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


def default_run_dir(cwd: Path, slug: str) -> Path:
    return cwd / RUNS_DIR / f"{utc_stamp()}-{slug}"


def unique(path: Path) -> Path:
    if not path.exists():
        return path
    for n in range(2, _UNIQUE_TRIES):
        cand = path.with_name(f"{path.name}-{n}")
        if not cand.exists():
            return cand
    raise InputError(f"{path}: cannot find a free run directory name", "pass --output DIR")


def check_explicit(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(f"{path}: exists and is not an empty directory; a run directory is never reused "
                         "or overwritten", "pass a new --output DIR, or omit --output for a fresh "
                         "./hotspot-runs/<timestamp>-<kernel>/")


def create(path: Path, explicit: bool) -> Path:
    if explicit:
        check_explicit(path)
        path.mkdir(parents=True, exist_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_UNIQUE_TRIES):
        path = unique(path)
        try:
            path.mkdir()  # atomic: two concurrent runs cannot both get it
            return path
        except FileExistsError:
            continue
    raise InputError(f"{path}: cannot create a fresh run directory", "pass --output DIR")


class RunRecord:
    """run.json: a plain dict persisted atomically on every `save()`."""

    def __init__(self, run_dir: Path, data: JsonObject) -> None:
        self.run_dir = run_dir
        self.data = {"schema_version": RUN_SCHEMA_VERSION, "status": "running", **data}
        self._t0 = time.monotonic_ns()

    def move(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.data["run_dir"] = str(run_dir)

    def save(self) -> None:
        path = self.run_dir / RUN_JSON
        tmp = path.with_name(RUN_JSON + ".tmp")
        tmp.write_bytes(dumps(self.data))
        os.replace(tmp, path)

    def finish(self, status: str, error: JsonObject | None = None) -> None:
        self.data["status"] = status
        self.data["finished_at"] = utc_iso()
        self.data["elapsed_ns"] = time.monotonic_ns() - self._t0
        if error is not None:
            self.data["error"] = error
        self.save()
