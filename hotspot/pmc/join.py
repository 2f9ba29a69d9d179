"""Join the dispatches of several counter files (separate collection passes) into one per dispatch.

By Dispatch_Id when every id the files share names the same kernel in each of them; otherwise by
(kernel name, n-th dispatch of that kernel), because a replayed run can shift the ids. Each pass is a
separate run, so a joined dispatch's duration is the mean of the passes' durations.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable

from hotspot.capture import CounterFile, DispatchCounters
from hotspot.record import record

JOIN_SINGLE = "single-file"
JOIN_DISPATCH_ID = "dispatch_id"
JOIN_KERNEL_ORDINAL = "kernel_ordinal"


@record
class JoinedDispatch:
    dispatch_id: int
    kernel: str
    counters: dict[str, float]
    duration_ns: float | None
    files: tuple[str, ...]          # the inputs that contributed to this dispatch


@record
class Joined:
    method: str
    reason: str
    dispatches: tuple[JoinedDispatch, ...]
    warnings: tuple[str, ...]


def join_files(files: list[CounterFile]) -> Joined:
    if len(files) == 1:
        only = files[0]
        return Joined(JOIN_SINGLE, "one input", tuple(
            JoinedDispatch(d.dispatch_id, d.kernel, dict(d.counters), d.duration_ns, (str(only.path),))
            for d in only.dispatches), ())
    names: dict[int, dict[str, str]] = defaultdict(dict)
    for f in files:
        for d in f.dispatches:
            names[d.dispatch_id][str(f.path)] = d.kernel
    shared = [i for i, by_file in names.items() if len(by_file) > 1]
    conflicts = sorted(i for i in shared if len(set(names[i].values())) > 1)
    if shared and not conflicts:
        reason = f"{len(shared)} dispatch ids shared, same kernel name in every input"
        return _merge(files, JOIN_DISPATCH_ID, reason, lambda f, d, n: d.dispatch_id)
    if conflicts:
        shown = ", ".join(str(i) for i in conflicts[:5]) + (" ..." if len(conflicts) > 5 else "")
        reason = f"dispatch ids {shown} name different kernels across inputs"
    else:
        reason = "the inputs share no dispatch id"
    joined = _merge(files, JOIN_KERNEL_ORDINAL, reason + "; matched the n-th dispatch of each kernel",
                    lambda f, d, n: (d.kernel, n))
    counts = _per_kernel_counts(files)
    uneven = sorted(k for k, per_file in counts.items()
                    if len(per_file) != len(files) or len(set(per_file.values())) > 1)
    extra = [f"kernel {k!r} has a different number of dispatches in each input; unmatched dispatches "
             f"carry only one pass's counters" for k in uneven[:3]]
    return Joined(joined.method, joined.reason, joined.dispatches, joined.warnings + tuple(extra))


def _per_kernel_counts(files: list[CounterFile]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for f in files:
        for d in f.dispatches:
            counts[d.kernel][str(f.path)] = counts[d.kernel].get(str(f.path), 0) + 1
    return counts


def _merge(files: list[CounterFile], method: str, reason: str,
           key_of: Callable[[CounterFile, DispatchCounters, int], Hashable]) -> Joined:
    slots: dict[Hashable, list[tuple[str, DispatchCounters]]] = {}
    for f in files:
        nth: dict[str, int] = defaultdict(int)
        for d in f.dispatches:  # sorted by dispatch id = launch order
            key = key_of(f, d, nth[d.kernel])
            nth[d.kernel] += 1
            slots.setdefault(key, []).append((str(f.path), d))
    conflicts: dict[str, list[str]] = {}
    out: list[JoinedDispatch] = []
    for parts in slots.values():
        first_file, first = parts[0]
        counters: dict[str, float] = {}
        owner: dict[str, str] = {}
        for file, d in parts:
            for name, value in d.counters.items():
                if name not in counters:
                    counters[name], owner[name] = value, file
                elif counters[name] != value:
                    conflicts.setdefault(name, [owner[name], file])
        durations = [d.duration_ns for _, d in parts if d.duration_ns is not None]
        out.append(JoinedDispatch(first.dispatch_id, first.kernel, counters,
                                  statistics.fmean(durations) if durations else None,
                                  tuple(dict.fromkeys(f for f, _ in parts))))
    out.sort(key=lambda j: (j.dispatch_id, j.kernel))
    warnings = tuple(f"{name} was collected in both {a} and {b} with different values; used {a}"
                     for name, (a, b) in sorted(conflicts.items()))
    return Joined(method, reason, tuple(out), warnings)
