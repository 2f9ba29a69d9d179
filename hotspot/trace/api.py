"""Use case behind `hotspot kernels`: any kernel-level trace -> one ranked kernel table (+ phases)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from hotspot.capture import (
    KERNEL_STATS,
    DispatchRecord,
    KernelInputs,
    KernelStatRecord,
    load_markers,
    read_dispatches,
    read_kernel_stats_csv,
    resolve_kernel_inputs,
)
from hotspot.errors import EmptyTraceError, HotspotError, UsageError, bad_file
from hotspot.result import Result
from hotspot.trace.kernel_ranking import (
    gpu_rows,
    kernel_rows,
    region_rows,
    select_markers,
    stats_rows,
)
from hotspot.trace.model import KernelTable, RegionRow
from hotspot.trace.regex import kernel_regexes
from hotspot.userregex import UserRegex, user_regex

COMMAND = "kernels"
COLLECTIVE = "collective"
def _check_timed(dispatches: list[DispatchRecord]) -> None:
    for d in dispatches:
        if d.start_ns is None or d.end_ns is None:
            where = d.source.split(":", 1)[-1]
            raise bad_file(where, "has no Start_Timestamp/End_Timestamp (an older layout), so kernel "
                           "durations are unknown",
                           "re-run with rocprofv3 --kernel-trace --stats to record durations")


def _filter_gpu(dispatches: list[DispatchRecord], gpu: int) -> list[DispatchRecord]:
    def ident(d: DispatchRecord) -> int | None:
        return d.gpu_id if d.gpu_id is not None else d.agent_number

    kept = [d for d in dispatches if ident(d) == gpu]
    if not kept:
        present = sorted({i for i in map(ident, dispatches) if i is not None})
        raise UsageError(f"--gpu {gpu} matches no dispatch; GPUs in the trace: "
                         f"{', '.join(map(str, present)) or 'none recorded'}",
                         "pick one of the listed ids (CSV inputs use the Agent_Id number)")
    return kept


def kernel_table(path: Path | str, *, top: int = 0, by_marker: str | None = None, gpu: int | None = None,
                 exclude_collectives: bool = False) -> Result[KernelTable]:
    """Rank the kernels of a trace by total GPU time. `by_marker` is a regex over roctx range names
    ("" = all) and adds one table per marker name; `top` = 0 keeps every kernel."""
    if top < 0:
        raise UsageError(f"--top {top} is negative", "use 0 for all kernels or a positive count")
    marker_rx = None
    if by_marker is not None:
        marker_rx = user_regex(by_marker, "--marker", "escape special characters, or use "
                               "--by-marker alone for all ranges")
    path = Path(path)
    inputs = resolve_kernel_inputs(path)
    excluded = frozenset({COLLECTIVE}) if exclude_collectives else frozenset()
    warnings: list[str] = []
    if len(inputs.files) > 1:
        warnings.append(f"combined {len(inputs.files)} {inputs.kind} files under {path}")

    if inputs.kind == KERNEL_STATS:
        return _stats_table(inputs, top, marker_rx, gpu, excluded, warnings)

    dispatches: list[DispatchRecord] = []
    runs: list[tuple[Path, int, int]] = []  # (file, first, end) index range of its dispatches
    for f in inputs.files:
        try:
            records = read_dispatches(inputs.kind, f)
            if path.is_dir():
                _check_timed(records)
        except HotspotError as err:
            if not path.is_dir() or len(inputs.files) == 1:
                raise
            # one unreadable or old-layout file must not hide the rest of a folder
            warnings.append(f"skipped {err.message}" + (f" ({err.hint})" if err.hint else ""))
            continue
        runs.append((f, len(dispatches), len(dispatches) + len(records)))
        dispatches.extend(records)
    if not dispatches:
        raise EmptyTraceError(f"{path}: no kernel dispatches recorded",
                              "check that the profiled command launched kernels (rocprofv3 --kernel-trace)")
    _check_timed(dispatches)
    regexes = kernel_regexes(d.kernel_name for d in dispatches)  # unique within the whole file
    gpus = gpu_rows(dispatches)
    per_run = [(f, dispatches[a:b]) for f, a, b in runs]
    if gpu is not None:
        dispatches = _filter_gpu(dispatches, gpu)
        kept = set(map(id, dispatches))
        per_run = [(f, [d for d in ds if id(d) in kept]) for f, ds in per_run]
        gpus = [g for g in gpus if g.gpu == gpu or (g.gpu is None and g.agent and
                                                      g.agent.rsplit(" ", 1)[-1] == str(gpu))]
    elif len(gpus) > 1:
        warnings.append(f"{len(gpus)} GPUs in the trace; the table sums them (use --gpu ID for one)")

    rows, base = kernel_rows(dispatches, regexes, excluded)
    table = KernelTable(
        source_kind=inputs.kind, sources=[str(f) for f in inputs.files],
        total_gpu_ns=sum(d.duration_ns or 0 for d in dispatches), pct_base_ns=base,
        excluded_families=sorted(excluded), kernel_count=len(rows), dispatch_count=len(dispatches),
        kernels=rows[:top] if top > 0 else rows, gpus=gpus,
    )
    if marker_rx is not None:
        _add_regions(table, inputs, per_run, marker_rx, regexes, excluded, top, warnings)
    return Result(COMMAND, table, warnings)


def _add_regions(table: KernelTable, inputs: KernelInputs, per_run: list[tuple[Path, list[DispatchRecord]]],
                 marker_rx: UserRegex, regexes: dict[str, str], excluded: frozenset[str], top: int,
                 warnings: list[str]) -> None:
    """Regions per run: a folder may hold runs of different processes or GPUs whose markers have
    nothing to do with each other, so one run's roctx ranges only bound its own dispatches. A run
    is one database, or one kernel trace CSV with the marker CSVs in its folder."""
    several = len(per_run) > 1
    regions: list[RegionRow] = []
    outside = instants = 0
    any_markers = any_selected = False
    for f, run_dispatches in per_run:
        markers = load_markers(inputs, f)
        selected, skipped = select_markers(markers, marker_rx)
        instants += skipped
        any_markers |= bool(markers)
        any_selected |= bool(selected)
        rows, out_ns = region_rows(run_dispatches, selected, regexes, excluded, top)
        regions += [replace(r, run=str(f)) for r in rows] if several else rows
        outside += out_ns
    if instants:
        warnings.append(f"skipped {instants} instant marker(s) (roctxMark): they bound no time")
    if not any_markers:
        warnings.append("no roctx ranges in the input; trace with rocprofv3 --marker-trace and wrap "
                        "phases in roctxRangePush/Pop")
    elif not any_selected:
        warnings.append(f"no roctx range name matches --by-marker {marker_rx.pattern!r}")
    elif several:
        warnings.append(f"{len(per_run)} runs in the folder: each run's marker regions count only "
                        "its own dispatches")
    table.regions, table.outside_regions_gpu_ns = regions, outside
    table.sources += [str(f) for f in inputs.marker_files]


def _stats_table(inputs: KernelInputs, top: int, marker_rx: UserRegex | None, gpu: int | None,
                 excluded: frozenset[str], warnings: list[str]) -> Result[KernelTable]:
    only = inputs.files[0]
    if marker_rx is not None or gpu is not None:
        flag = "--by-marker" if marker_rx is not None else "--gpu"
        raise UsageError(f"{flag} needs per-dispatch data, but {only} is a kernel stats CSV",
                         "pass the *_kernel_trace.csv or *_results.db from the same run")
    if len(inputs.files) > 1:
        raise UsageError(f"{len(inputs.files)} kernel stats CSVs found ({', '.join(map(str, inputs.files))})",
                         "pass one of them")
    stats: list[KernelStatRecord] = read_kernel_stats_csv(only)
    if not stats:
        raise EmptyTraceError(f"{only}: no kernels listed", "check that the profiled command launched kernels")
    names = [s.name for s in stats]
    if len(set(names)) != len(names):
        raise bad_file(only, "lists the same kernel name twice", "is the file concatenated from two runs?")
    rows, base = stats_rows(stats, kernel_regexes(names), excluded)
    table = KernelTable(
        source_kind=inputs.kind, sources=[str(only)], total_gpu_ns=sum(s.total_ns for s in stats),
        pct_base_ns=base, excluded_families=sorted(excluded), kernel_count=len(rows),
        dispatch_count=sum(s.calls for s in stats), kernels=rows[:top] if top > 0 else rows,
    )
    return Result(COMMAND, table, warnings)
