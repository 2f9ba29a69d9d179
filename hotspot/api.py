"""hotspot as a Python library (docs/python-api.md): `hotspot.analyze`, `hotspot.diff`, `hotspot.pmc`.

Each runs the use case the command of the same name runs (hotspot/plan/entry_point.py `analyze`,
hotspot/diff/api.py `diff_paths`, hotspot/pmc/api.py `analyze_pmc`), in one capture session as a
command does, and returns its typed Result: `.data` holds the records (attributes), `.warnings`
the notes, `.to_json()` the bytes `hotspot COMMAND ... --format json` prints. A bad input raises
hotspot.errors.HotspotError (its `.message`, `.hint`, `.code` and `.exit_code` are the CLI's).

`import hotspot` loads none of this: hotspot/__init__.py reaches it on first use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from hotspot.diff.api import DiffResult
    from hotspot.plan.entry_point import AnalysisData
    from hotspot.pmc.api import PmcData
    from hotspot.result import Result

PathLike = Union[str, "os.PathLike[str]"]
DEFAULT_TOPK = 15  # the command line's `--topk` default: tables shortened the same way


def analyze(path: PathLike, *, plan: bool = False, kernel: str | None = None, arch: str | None = None,
            topk: int = DEFAULT_TOPK, detail: bool = False, all_dispatches: bool = False,
            max_file_mb: float | None = None, max_waves: int | None = None,
            meta: Sequence[PathLike] = (), pmc: Sequence[PathLike] = (),
            jobs: int | None = None) -> Result[AnalysisData]:
    """`hotspot analyze PATH`: where the cycles of an ATT dispatch go. `plan=True` (or counter
    files in `pmc`) attaches the optimization plan; `topk=0` keeps every table row; `jobs=None`
    picks the worker processes as `--jobs auto` does."""
    from hotspot.att.model import DEFAULT_MAX_FILE_MB, PLAN_ATTACHED, PLAN_NONE, AnalyzeOptions
    from hotspot.capture import capture_session
    from hotspot.plan.entry_point import analyze as analyze_target

    opts = AnalyzeOptions(topk=topk, detail=detail, kernel=kernel, arch=arch,
                          all_dispatches=all_dispatches,
                          max_file_mb=DEFAULT_MAX_FILE_MB if max_file_mb is None else max_file_mb,
                          max_waves=max_waves, meta=tuple(os.fspath(m) for m in meta), jobs=jobs,
                          plan=PLAN_ATTACHED if plan or pmc else PLAN_NONE,
                          pmc=tuple(os.fspath(p) for p in pmc))
    with capture_session():
        return analyze_target(Path(path), opts)


def diff(before: PathLike, after: PathLike, *, kernel: str | None = None, max_waves: int | None = None,
         seed: int | None = None) -> Result[DiffResult]:
    """`hotspot diff BEFORE AFTER`: dispatch dirs or saved analyze JSON files compared, each change
    tested against capture noise (`seed`: the bootstrap's, default the command line's)."""
    from hotspot.capture import capture_session
    from hotspot.diff.api import diff_paths
    from hotspot.diff.noise import DEFAULT_SEED

    with capture_session():
        return diff_paths(Path(before), Path(after), kernel, max_waves,
                          DEFAULT_SEED if seed is None else seed)


def pmc(paths: PathLike | Sequence[PathLike], *, kernel: str | None = None,
        dispatches: Sequence[int] | None = None, ideal_bytes: float | None = None,
        arch: str | None = None, peak_gbps: float | None = None, per_dispatch: bool = False) -> Result[PmcData]:
    """`hotspot pmc PATH...`: L2 hit rate, fabric bytes, bandwidth and verdicts from counter files
    (one path or several)."""
    from hotspot.capture import capture_session
    from hotspot.pmc.api import analyze_pmc

    many = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    with capture_session():
        return analyze_pmc([Path(p) for p in many], kernel=kernel,
                           dispatches=list(dispatches) if dispatches is not None else None,
                           ideal_bytes=ideal_bytes, arch=arch, peak_gbps=peak_gbps,
                           per_dispatch=per_dispatch)
