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
    NextStep,
    Occupancy,
    OccupancyDetails,
    compute_occupancy,
    occupancy_candidates,
)
from hotspot.arch.targets import KNOWN_GFX
from hotspot.att.findings import Finding
from hotspot.att.launch import LaunchOut, checked_against_occupancy, match_launch
from hotspot.att.lds_bound import LdsBound, lds_lower_bound
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
class AchievedOut:
    mean_waves_per_simd: float | None
    peak_waves_per_simd: int
    simds: int
    waves: int
    kernel_ids: list[int]
    # per traced SE (key: SE number as a string, ascending): distinct CUs that ran a wave, and the
    # one-round rule (hotspot/arch/achieved.py): the grid-underfill evidence without a launch row
    busy_cus_per_se: dict[str, int] = field(default_factory=dict)
    one_round: bool | None = None


@record
class DispatchOccupancy:
    available: bool
    reason: str  # why theoretical occupancy is missing, when it is
    arch: str
    waves_per_simd: int | None = None
    limiter: str | None = None
    limiters: tuple[str, ...] = ()
    limits: dict[str, int | None] = field(default_factory=dict)
    next_step: dict[str, NextStep] = field(default_factory=dict)  # per binding limiter
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


def _pick(named: list[DispatchRecord], dispatch_id: int | None) -> DispatchRecord | None:
    """The row whose resources stand for the traced kernel: among the rows of its name, the same
    dispatch id (callers pass an id only when the file comes from the same run), else the first
    (a kernel's registers do not change between its dispatches; its launch is matched apart,
    hotspot/att/launch.py)."""
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


# (rows of the traced kernel's name in file order, the file, the dispatch id when the file is from
# the capture's run): what the launch is matched from
NamedRows = tuple[list[DispatchRecord], Path, int | None]


def gather_candidates(d: Path, dispatch_id: int | None, kernel: KernelSymbol | None,
                      warnings: list[str], meta: Sequence[Path] = (),
                      records: list[NamedRows] | None = None) -> list[res.ResourceCandidate]:
    """Resources from the nearest file of each kind that knows the kernel (most trusted first);
    the rows of the kernel's name are appended to `records` when given (the launch is matched
    from them)."""
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
            run_id = dispatch_id if same_run(d, path) else None
            try:
                named = [r for r in reader(path) if _same_kernel(r.kernel_name, names)]
            except HotspotError as err:
                if isinstance(err, QueryBudgetError) and path in explicit:
                    raise  # a file the user named that cannot be read in bounded time: said, exit 3
                warnings.append(f"resources: {err.message}; file skipped")
                continue
            rec = _pick(named, run_id)
            if rec is not None:
                out.append(_candidate(rec, kind, path))
                if records is not None:
                    records.append((named, path, run_id))
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
                       sorted(ids), {str(se): n for se, n in sorted(got.busy_cus_per_se.items())},
                       got.one_round)


def dispatch_occupancy(d: Path, disp: DispatchDir, kernel: KernelSymbol | None,
                       rows: Sequence[CodeRow], arch: Arch, warnings: list[str],
                       meta: Sequence[Path] = ()) -> tuple[DispatchOccupancy, Finding | None]:
    records: list[NamedRows] = []
    candidates = gather_candidates(d, disp.dispatch_id, kernel, warnings, meta, records)
    occ, gap = _theoretical(d, disp, kernel, rows, arch, warnings, meta, candidates)
    launch = launch_of(records, arch, len(disp.wave_files))
    if launch is not None and occ.achieved is not None:
        from hotspot.arch.products import find_product

        product = find_product(arch.product) if arch.product else None
        launch = checked_against_occupancy(launch, occ.achieved.busy_cus_per_se, occ.achieved.one_round,
                                           product.cus_per_se if product is not None else None)
    if launch is not None and launch.reason:
        warnings.append(f"launch: {launch.reason}")
    return replace(occ, launch=launch), gap


def _theoretical(d: Path, disp: DispatchDir, kernel: KernelSymbol | None, rows: Sequence[CodeRow],
                 arch: Arch, warnings: list[str], meta: Sequence[Path],
                 candidates: list[res.ResourceCandidate]) -> tuple[DispatchOccupancy, Finding | None]:
    isa = res.scan_isa_registers(r.isa for r in rows)
    target = arch.target
    bound = lds_lower_bound(rows)
    resolved = with_isa_lds(res.resolve_resources(candidates, isa, target), bound)
    warnings.extend(f"resources: {w}" for w in resolved.warnings)
    resources = {"vgpr": resolved.vgpr, "agpr": resolved.agpr, "sgpr": resolved.sgpr,
                 "lds": resolved.lds_bytes, "wg": resolved.wg_threads,
                 "sgpr_includes_implicit": resolved.sgpr_includes_implicit,
                 "source": dict(resolved.source)}
    if bound is not None:
        resources["lds_isa"] = {"bytes": bound.bytes, "line_number": bound.line_number,
                                "isa": bound.isa, "offset": bound.offset, "width": bound.width,
                                "basis": bound.basis, "lower_bound": True}
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


def with_isa_lds(resolved: res.Resources, bound: LdsBound | None) -> res.Resources:
    """The LDS figure raised to the ISA's floor when the profiler's is missing or smaller (the
    kernel trace's LDS is static only: a kernel allocating LDS dynamically shows 0 there)."""
    if bound is None or (resolved.lds_bytes is not None and resolved.lds_bytes >= bound.bytes):
        return resolved
    was = (f"{resolved.lds_bytes} bytes from {resolved.source.get('lds_bytes')}"
           if resolved.lds_bytes is not None else "no LDS figure from a profiler file")
    note = (f"LDS: {was}, but the ISA reaches {bound.bytes} bytes (code row #{bound.line_number} "
            f"`{bound.isa[:60]}`: {bound.basis}, offset {bound.offset} + width {bound.width}); "
            f"using {bound.bytes} bytes as a lower bound from the ISA (dynamic LDS is not in the "
            "kernel trace)")
    source = dict(resolved.source)
    source["lds_bytes"] = f"{res.ISA} (lower bound: row #{bound.line_number})"
    return replace(resolved, lds_bytes=bound.bytes, source=source,
                   warnings=(*resolved.warnings, note))


def _from_model(o: Occupancy, label: str, resources: JsonObject, achieved: AchievedOut | None,
                candidates: JsonObject | None) -> DispatchOccupancy:
    unknown = tuple(name for name, v in o.limits.items() if v is None)
    return DispatchOccupancy(True, "", label, o.waves_per_simd, o.limiter, tuple(o.limiters),
                             dict(o.limits), dict(o.next_step), tuple(o.notes), o.details,
                             resources, achieved, candidates, unknown_limits=unknown)


def launch_of(records: Sequence[NamedRows], arch: Arch, traced_waves: int | None = None) -> LaunchOut | None:
    """The launch from the most trusted file whose rows of the kernel's name have a grid and a
    workgroup size, matched to the traced dispatch (hotspot/att/launch.py)."""
    from hotspot.arch.products import find_product

    product = find_product(arch.product) if arch.product else None
    same = product is not None and product.gfx == arch.gfx
    wave_size = arch.target.wave_size if arch.target is not None else None
    for named, path, run_id in records:
        out = match_launch(named, str(path), run_id, traced_waves, wave_size,
                           product.cus if same else None, product.peak_hbm_gbps if same else None)
        if out is not None:
            return out
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
