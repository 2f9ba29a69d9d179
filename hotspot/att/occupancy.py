"""Theoretical vs achieved occupancy of one dispatch: gathers the kernel's resources from the files
beside the dispatch dir (rocpd db > kernel trace CSV > counter collection CSV, ISA scan as a floor),
runs the hotspot/arch model, and measures achieved occupancy from occupancy.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace
from pathlib import Path

from hotspot.arch import resources as res
from hotspot.arch.achieved import achieved_from_columns
from hotspot.arch.arch import CDNA_CANDIDATES, Arch
from hotspot.arch.occupancy import (
    Occupancy,
    OccupancyDetails,
    compute_occupancy,
    occupancy_candidates,
)
from hotspot.arch.targets import KNOWN_GFX
from hotspot.att.findings import Finding
from hotspot.capture.layout import DispatchDir
from hotspot.capture.model import CodeRow, KernelSymbol
from hotspot.capture.occupancy import read_occupancy_json
from hotspot.capture.sidefiles import nearby_files, same_run
from hotspot.capture.trace.records import DispatchRecord
from hotspot.errors import HotspotError
from hotspot.result import JsonObject
from hotspot.record import record

# Achieved mean below this fraction of the theoretical waves/SIMD is an `occupancy-gap` finding.
OCCUPANCY_GAP_RATIO = 0.5
# Trace names may be truncated by the profiler; a shared prefix this long counts as the same kernel.
MIN_TRUNCATED_MATCH = 24


@record
class LaunchOut:
    """The kernel's launch as the kernel trace / rocpd row gives it (grid and workgroup in
    work-items), the workgroups it makes, and the CUs of the product it ran on."""

    grid: list[int]
    workgroup: list[int]
    workgroups: int
    duration_ns: int | None
    cus: int | None          # compute units of the product (arch product table), when known
    source: str              # the file the row came from
    peak_hbm_gbps: float | None = None  # the product's peak HBM bandwidth (arch product table)


@record
class AchievedOut:
    mean_waves_per_simd: float | None
    peak_waves_per_simd: int
    simds: int
    waves: int
    kernel_ids: list[int]


@record
class DispatchOccupancy:
    available: bool
    reason: str  # why theoretical occupancy is missing, when it is
    arch: str
    waves_per_simd: int | None = None
    limiter: str | None = None
    limiters: tuple[str, ...] = ()
    limits: dict[str, int | None] = field(default_factory=dict)
    next_step: JsonObject = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    details: OccupancyDetails | None = None
    resources: JsonObject = field(default_factory=dict)
    achieved: AchievedOut | None = None
    candidates: JsonObject | None = None  # arch undecided: occupancy per candidate
    launch: LaunchOut | None = None        # grid/workgroups and the product's CUs, when known
    unknown_limits: tuple[str, ...] = ()   # limits whose input was not found: waves_per_simd is then
    #                                        an upper bound, and no occupancy rule acts on it


def _names(kernel: KernelSymbol | None) -> list[str]:
    if kernel is None:
        return []
    return [n for n in (kernel.demangled, kernel.symbol) if n]


def _same_kernel(trace_name: str, names: Sequence[str]) -> bool:
    for n in names:
        if trace_name == n:
            return True
        shorter, longer = sorted((trace_name, n), key=len)
        if len(shorter) >= MIN_TRUNCATED_MATCH and longer.startswith(shorter):
            return True
    return False


def _pick(records: list[DispatchRecord], dispatch_id: int | None, names: list[str]) -> DispatchRecord | None:
    """The row of the traced kernel: by name; among several, the same dispatch id (callers pass an
    id only when the file comes from the same run), else the first."""
    named = [r for r in records if _same_kernel(r.kernel_name, names)]
    if dispatch_id is not None:
        for r in named:
            if r.dispatch_id == dispatch_id:
                return r
    return named[0] if named else None


def _candidate(rec: DispatchRecord, kind: str, path: Path) -> res.ResourceCandidate:
    wg = rec.workgroup[0] * rec.workgroup[1] * rec.workgroup[2] if rec.workgroup else None
    return res.ResourceCandidate(rec.vgpr, rec.accum_vgpr, rec.sgpr, rec.lds_bytes, wg, kind, str(path))


# The readers are imported when such a file is found: most captures have neither beside them, and
# the rocpd reader loads sqlite3 and tempfile (~5 ms of every analysis).
def _read_rocpd(path: Path) -> list[DispatchRecord]:
    from hotspot.capture.trace.rocpd import read_rocpd_dispatches

    return read_rocpd_dispatches(path)


def _read_kernel_trace(path: Path) -> list[DispatchRecord]:
    from hotspot.capture.trace.kernel_trace import read_kernel_trace_csv

    return read_kernel_trace_csv(path)


def gather_candidates(d: Path, dispatch_id: int | None, kernel: KernelSymbol | None,
                      warnings: list[str], meta: Sequence[Path] = (),
                      records: list[tuple[DispatchRecord, Path]] | None = None) -> list[res.ResourceCandidate]:
    """Resources from the nearest file of each kind that knows the kernel (most trusted first);
    the matched rows are appended to `records` when given (the launch comes from them)."""
    names = _names(kernel)
    if not names:
        return []
    from hotspot.capture.trace._sqlite import QueryBudgetError

    explicit = {Path(m) for m in meta}
    out: list[res.ResourceCandidate] = []
    sources = ((res.ROCPD, ("*results.db",), _read_rocpd),
               (res.KERNEL_TRACE, ("*kernel_trace.csv",), _read_kernel_trace),
               (res.COUNTER_COLLECTION, ("*counter_collection.csv",), _read_kernel_trace))
    for kind, patterns, reader in sources:
        for path in nearby_files(d, *patterns, meta=meta):
            try:
                rec = _pick(reader(path), dispatch_id if same_run(d, path) else None, names)
            except HotspotError as err:
                if isinstance(err, QueryBudgetError) and path in explicit:
                    raise  # a file the user named that cannot be read in bounded time: said, exit 3
                warnings.append(f"resources: {err.message}; file skipped")
                continue
            if rec is not None:
                out.append(_candidate(rec, kind, path))
                if records is not None:
                    records.append((rec, path))
                break  # nearest file of this kind that knows the kernel
    return out


def _achieved(d: Path, kernel: KernelSymbol | None, warnings: list[str]) -> AchievedOut | None:
    path = d / "occupancy.json"
    if not path.is_file():
        return None
    try:
        trace = read_occupancy_json(path)
    except HotspotError as err:
        warnings.append(f"{err.message}; achieved occupancy not available")
        return None
    names = _names(kernel)
    ids = [k for k, name in trace.dispatches.items() if _same_kernel(name, names)]
    got = achieved_from_columns(trace.columns_by_se, ids or None)
    if got is None:
        return None
    return AchievedOut(got.mean_waves_per_simd, got.peak_waves_per_simd, got.simds, got.waves,
                       sorted(ids))


def dispatch_occupancy(d: Path, disp: DispatchDir, kernel: KernelSymbol | None,
                       rows: Sequence[CodeRow], arch: Arch, warnings: list[str],
                       meta: Sequence[Path] = ()) -> tuple[DispatchOccupancy, Finding | None]:
    records: list[tuple[DispatchRecord, Path]] = []
    candidates = gather_candidates(d, disp.dispatch_id, kernel, warnings, meta, records)
    occ, gap = _theoretical(d, disp, kernel, rows, arch, warnings, meta, candidates)
    return replace(occ, launch=launch_of(records, arch)), gap


def _theoretical(d: Path, disp: DispatchDir, kernel: KernelSymbol | None, rows: Sequence[CodeRow],
                 arch: Arch, warnings: list[str], meta: Sequence[Path],
                 candidates: list[res.ResourceCandidate]) -> tuple[DispatchOccupancy, Finding | None]:
    isa = res.scan_isa_registers(r.isa for r in rows)
    target = arch.target
    resolved = res.resolve_resources(candidates, isa, target)
    warnings.extend(f"resources: {w}" for w in resolved.warnings)
    resources = {"vgpr": resolved.vgpr, "agpr": resolved.agpr, "sgpr": resolved.sgpr,
                 "lds": resolved.lds_bytes, "wg": resolved.wg_threads,
                 "sgpr_includes_implicit": resolved.sgpr_includes_implicit,
                 "source": dict(resolved.source)}
    achieved = _achieved(d, kernel, warnings)
    label = arch.label
    if resolved.vgpr is None:
        return DispatchOccupancy(False, "no VGPR count: no profiler CSV/db beside the dispatch and no "
                                 "register in the ISA", label, resources=resources,
                                 achieved=achieved), None
    if arch.gfx is not None and target is None:
        # A decided target that is not in the arch table: no other target's limits stand in for it.
        return DispatchOccupancy(False, f"{arch.gfx} is not in hotspot's arch table (known: "
                                 f"{', '.join(KNOWN_GFX)}): its register file, LDS and wave limits "
                                 "are unknown, so no theoretical occupancy", label,
                                 resources=resources, achieved=achieved), None
    kwargs = dict(agpr=resolved.agpr or 0, sgpr=resolved.sgpr, lds_bytes=resolved.lds_bytes,
                  wg_threads=resolved.wg_threads,
                  sgpr_includes_implicit=resolved.sgpr_includes_implicit)
    try:
        if target is None:
            cands = occupancy_candidates(arch.candidates or CDNA_CANDIDATES, resolved.vgpr, **kwargs)
            per = {g: {"waves_per_simd": o.waves_per_simd, "limiter": o.limiter,
                       "limits": o.limits, "next_step": o.next_step}
                   for g, o in cands.by_arch.items()}
            occ = DispatchOccupancy(
                True, "", label, resources=resources, achieved=achieved,
                candidates={"by_arch": per, "agree": cands.agree, "summary": cands.summary,
                            "excluded": cands.excluded})
            if cands.agree and cands.by_arch:
                o = next(iter(cands.by_arch.values()))
                occ = _from_model(o, label, resources, achieved, occ.candidates)
            return occ, None
        o = compute_occupancy(target, resolved.vgpr, **kwargs)
    except HotspotError as err:
        warnings.append(f"occupancy: {err.message}")
        return DispatchOccupancy(False, err.message, label, resources=resources,
                                 achieved=achieved), None
    occ = _from_model(o, label, resources, achieved, None)
    return occ, occupancy_gap(occ)


def _from_model(o: Occupancy, label: str, resources: JsonObject, achieved: AchievedOut | None,
                candidates: JsonObject | None) -> DispatchOccupancy:
    unknown = tuple(name for name, v in o.limits.items() if v is None)
    return DispatchOccupancy(True, "", label, o.waves_per_simd, o.limiter, tuple(o.limiters),
                             dict(o.limits), dict(o.next_step), tuple(o.notes), o.details,
                             resources, achieved, candidates, unknown_limits=unknown)


def launch_of(records: list[tuple[DispatchRecord, Path]], arch: Arch) -> LaunchOut | None:
    """The launch from the most trusted matched row that has a grid and a workgroup size."""
    from hotspot.arch.products import find_product

    for rec, path in records:
        if not rec.grid or not rec.workgroup or any(w <= 0 for w in rec.workgroup):
            continue
        groups = 1
        for g, w in zip(rec.grid, rec.workgroup):
            groups *= -(-g // w)  # ceil: a partial workgroup still occupies a slot
        product = find_product(arch.product) if arch.product else None
        same = product is not None and product.gfx == arch.gfx
        return LaunchOut(list(rec.grid), list(rec.workgroup), groups, rec.duration_ns,
                         product.cus if same else None, str(path),
                         product.peak_hbm_gbps if same else None)
    return None


def occupancy_gap(occ: DispatchOccupancy) -> Finding | None:
    a = occ.achieved
    if not occ.available or a is None or a.mean_waves_per_simd is None or not occ.waves_per_simd:
        return None
    ratio = a.mean_waves_per_simd / occ.waves_per_simd
    if ratio >= OCCUPANCY_GAP_RATIO:
        return None
    why = ("the traced CUs never held the theoretical count (too few workgroups for the CUs, or "
           "waves finish before the next ones land)" if a.peak_waves_per_simd < occ.waves_per_simd
           else "the theoretical count is reached only briefly (launch ramp, tail, or imbalance "
           "between CUs)")
    return Finding(
        "occupancy-gap", "medium",
        f"achieved occupancy averages {a.mean_waves_per_simd:.2f} waves/SIMD (peak "
        f"{a.peak_waves_per_simd}) against {occ.waves_per_simd} theoretical: {why}",
        {"theoretical_waves_per_simd": occ.waves_per_simd,
         "achieved_mean_waves_per_simd": a.mean_waves_per_simd,
         "achieved_peak_waves_per_simd": a.peak_waves_per_simd, "ratio": ratio,
         "threshold_ratio": OCCUPANCY_GAP_RATIO},
        "give each CU more work in flight: a larger grid or more workgroups per CU, persistent "
        "workgroups, or overlap with other kernels; compare with the kernel's grid size")
