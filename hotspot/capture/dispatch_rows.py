"""The traced kernel's rows in the side files that list dispatches (rocpd db, kernel trace CSV,
counter collection CSV; capture/sidefiles.py SIDE_FILES): what its resources and its launch are
read from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hotspot.capture.model import KernelSymbol
from hotspot.capture.sidefiles import DISPATCHES, nearby_files, same_run, side_files
from hotspot.capture.trace.records import DispatchRecord
from hotspot.errors import HotspotError
from hotspot.record import record

# Trace names may be truncated by the profiler; a shared prefix this long counts as the same kernel.
MIN_TRUNCATED_MATCH = 24


@record
class KernelRows:
    """The rows of the traced kernel's name in one file, in file order."""

    kind: str                 # the SideFile kind (arch/resources.py names the same sources)
    rows: list[DispatchRecord]
    path: Path
    run_id: int | None        # the traced dispatch's id when the file comes from the capture's run


def kernel_names(kernel: KernelSymbol | None) -> list[str]:
    if kernel is None:
        return []
    return [n for n in (kernel.demangled, kernel.symbol) if n]


def same_kernel(trace_name: str, names: Sequence[str]) -> bool:
    for n in names:
        if trace_name == n:
            return True
        shorter, longer = sorted((trace_name, n), key=len)
        if len(shorter) >= MIN_TRUNCATED_MATCH and longer.startswith(shorter):
            return True
    return False


def pick_row(named: Sequence[DispatchRecord], dispatch_id: int | None) -> DispatchRecord | None:
    """The row whose resources stand for the traced kernel: among the rows of its name, the same
    dispatch id (callers pass an id only when the file comes from the same run), else the first
    (a kernel's registers do not change between its dispatches; its launch is matched apart,
    hotspot/att/launch_match.py)."""
    if dispatch_id is not None:
        for r in named:
            if r.dispatch_id == dispatch_id:
                return r
    return named[0] if named else None


def kernel_rows(d: Path, dispatch_id: int | None, kernel: KernelSymbol | None, warnings: list[str],
                meta: Sequence[Path] = ()) -> list[KernelRows]:
    """Per kind of file (most trusted first), the nearest file that knows the kernel: the rows of
    its name. An unreadable file is skipped with a warning; one the user named (--meta) that cannot
    be read in bounded time is an error."""
    names = kernel_names(kernel)
    if not names:
        return []
    from hotspot.capture.trace._sqlite import QueryBudgetError

    explicit = {Path(m) for m in meta}
    out: list[KernelRows] = []
    for side in side_files(DISPATCHES):
        for path in nearby_files(d, side, meta=meta):
            run_id = dispatch_id if same_run(d, path) else None
            try:
                named = [r for r in side.read(path) if same_kernel(r.kernel_name, names)]
            except HotspotError as err:
                if isinstance(err, QueryBudgetError) and path in explicit:
                    raise  # a file the user named that cannot be read in bounded time: said, exit 3
                warnings.append(f"resources: {err.message}; file skipped")
                continue
            if pick_row(named, run_id) is not None:
                out.append(KernelRows(side.kind, named, path, run_id))
                break  # nearest file of this kind that knows the kernel
    return out
