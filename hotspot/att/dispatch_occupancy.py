"""Theoretical vs achieved occupancy of one dispatch: the kernel's resources from its rows in the side
files the Capture found (rocpd db > kernel trace CSV > counter collection CSV, ISA scan as a floor),
the hotspot/arch model over them, and the achieved occupancy from the capture's occupancy.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from hotspot.arch import resources as res
from hotspot.arch.achieved import achieved_from_columns
from hotspot.arch.arch import CDNA_CANDIDATES, Arch
from hotspot.arch.occupancy_model import (
    Limits,
    NextStep,
    Occupancy,
    OccupancyDetails,
    compute_occupancy,
    occupancy_candidates,
)
from hotspot.arch.targets import KNOWN_GFX
from hotspot.att.findings import Finding, OccupancyGapEvidence
from hotspot.att.launch_match import LaunchOut, checked_against_capture_grid, checked_against_occupancy, match_launch
from hotspot.att.lds_bound import LdsBound, lds_lower_bound
from hotspot.capture import Capture, DispatchRecord, KernelRows, kernel_names, pick_row, same_kernel
from hotspot.errors import HotspotError
from hotspot.result import JsonObject
from hotspot.record import record

# Achieved mean below this fraction of the theoretical waves/SIMD is an `occupancy-gap` finding.
OCCUPANCY_GAP_RATIO = 0.5


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
class IsaLds:
    """The LDS the ISA proves the kernel uses at least (hotspot/att/lds_bound.py)."""

    bytes: int
    line_number: int
    isa: str
    offset: int
    width: int
    basis: str
    lower_bound: bool = True


@record(frozen=False)
class KernelResources:
    """The kernel's resources the occupancy model was given, and the file each came from."""

    # (defaults: a saved document that names only some reads back; the analysis gives them all)
    vgpr: int | None = None
    agpr: int | None = None
    sgpr: int | None = None
    lds: int | None = None
    wg: int | None = None
    sgpr_includes_implicit: bool = False
    source: dict[str, str] = field(default_factory=dict)  # field -> source label ("isa (code.json)", ...)
    # set only when the ISA bounds the LDS; left unset (and out of the JSON) otherwise
    lds_isa: IsaLds | None = field(default=None, init=False)


@record
class CandidateOut:
    """The occupancy one candidate target would give (the arch undecided)."""

    waves_per_simd: int
    limiter: str
    limits: Limits
    next_step: dict[str, NextStep]


@record
class CandidatesOut:
    """Occupancy under each candidate target, and whether they agree."""

    by_arch: dict[str, CandidateOut]
    agree: bool
    summary: str
    excluded: dict[str, str]  # target -> why it was left out


@record
class DispatchOccupancy:
    available: bool
    reason: str  # why theoretical occupancy is missing, when it is
    arch: str
    waves_per_simd: int | None = None
    limiter: str | None = None
    limiters: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)  # none set when the model did not run
    next_step: dict[str, NextStep] = field(default_factory=dict)  # per binding limiter below the cap
    notes: tuple[str, ...] = ()
    details: OccupancyDetails | None = None
    resources: KernelResources | None = None  # always given by dispatch_occupancy
    achieved: AchievedOut | None = None
    candidates: CandidatesOut | None = None  # arch undecided: occupancy per candidate
    launch: LaunchOut | None = None        # grid/workgroups and the product's CUs, when known
    unknown_limits: tuple[str, ...] = ()   # limits whose input was not found: waves_per_simd is then
    #                                        an upper bound, and no occupancy rule acts on it


def _candidate(rec: DispatchRecord, kind: str, path: Path) -> res.ResourceCandidate:
    wg = rec.workgroup[0] * rec.workgroup[1] * rec.workgroup[2] if rec.workgroup else None
    return res.ResourceCandidate(rec.vgpr, rec.accum_vgpr, rec.sgpr, rec.lds_bytes, wg, kind, str(path))


def resource_candidates(found: Sequence[KernelRows]) -> list[res.ResourceCandidate]:
    """Resources from the nearest file of each kind that knows the kernel (most trusted first)."""
    out = []
    for k in found:
        rec = pick_row(k.rows, k.run_id)
        if rec is not None:
            out.append(_candidate(rec, k.kind, k.path))
    return out


def _achieved(cap: Capture, warnings: list[str]) -> AchievedOut | None:
    try:
        trace = cap.occupancy()
    except HotspotError as err:
        warnings.append(f"{err.message}; achieved occupancy not available")
        return None
    if trace is None:
        return None
    names = kernel_names(cap.kernel)
    ids = [k for k, name in trace.dispatches.items() if same_kernel(name, names)]
    from hotspot.att.engine.native import native  # the C twin, loaded where it is used

    got = achieved_from_columns(trace.columns_by_se, ids or None, native())
    if got is None:
        return None
    return AchievedOut(got.mean_waves_per_simd, got.peak_waves_per_simd, got.simds, got.waves,
                       sorted(ids), {str(se): n for se, n in sorted(got.busy_cus_per_se.items())},
                       got.one_round)


def dispatch_occupancy(cap: Capture, arch: Arch, warnings: list[str]
                       ) -> tuple[DispatchOccupancy, Finding | None]:
    found = cap.kernel_rows(warnings)
    occ, gap = _theoretical(cap, arch, warnings, resource_candidates(found))
    launch = launch_of(found, arch, len(cap.wave_files))
    if launch is not None and occ.achieved is not None:
        from hotspot.arch.products import SES_PER_XCD, find_product

        product = find_product(arch.product) if arch.product else None
        launch = checked_against_occupancy(launch, occ.achieved.busy_cus_per_se, occ.achieved.one_round,
                                           product.cus_per_se if product is not None else None)
        ses_total = (product.xcds * SES_PER_XCD if product is not None and product.cus_per_se is not None
                     else None)
        launch = checked_against_capture_grid(
            launch, occ.achieved.waves, len(occ.achieved.busy_cus_per_se), ses_total,
            arch.target.wave_size if arch.target is not None else None, occ.achieved.one_round)
    if launch is not None and launch.reason:
        warnings.append(f"launch: {launch.reason}")
    return replace(occ, launch=launch), gap


def _theoretical(cap: Capture, arch: Arch, warnings: list[str],
                 candidates: list[res.ResourceCandidate]) -> tuple[DispatchOccupancy, Finding | None]:
    rows = cap.rows
    isa = res.scan_isa_registers(r.isa for r in rows)
    target = arch.target
    bound = lds_lower_bound(rows)
    resolved = with_isa_lds(res.resolve_resources(candidates, isa, target), bound)
    warnings.extend(f"resources: {w}" for w in resolved.warnings)
    resources = KernelResources(resolved.vgpr, resolved.agpr, resolved.sgpr, resolved.lds_bytes,
                                resolved.wg_threads, resolved.sgpr_includes_implicit, dict(resolved.source))
    if bound is not None:
        resources.lds_isa = IsaLds(bound.bytes, bound.line_number, bound.isa, bound.offset, bound.width,
                                   bound.basis)
    achieved = _achieved(cap, warnings)
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
    kwargs: dict[str, Any] = dict(agpr=resolved.agpr or 0, sgpr=resolved.sgpr, lds_bytes=resolved.lds_bytes,
                  wg_threads=resolved.wg_threads,
                  sgpr_includes_implicit=resolved.sgpr_includes_implicit)
    try:
        if target is None:
            cands = occupancy_candidates(arch.candidates or CDNA_CANDIDATES, resolved.vgpr, **kwargs)
            per = {g: CandidateOut(o.waves_per_simd, o.limiter, o.limits, o.next_step)
                   for g, o in cands.by_arch.items()}
            occ = DispatchOccupancy(
                True, "", label, resources=resources, achieved=achieved,
                candidates=CandidatesOut(per, cands.agree, cands.summary, cands.excluded))
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


def _from_model(o: Occupancy, label: str, resources: KernelResources, achieved: AchievedOut | None,
                candidates: CandidatesOut | None) -> DispatchOccupancy:
    unknown = tuple(name for name, v in o.limits.items() if v is None)
    return DispatchOccupancy(True, "", label, o.waves_per_simd, o.limiter, tuple(o.limiters),
                             o.limits, dict(o.next_step), tuple(o.notes), o.details,
                             resources, achieved, candidates, unknown_limits=unknown)


def launch_of(found: Sequence[KernelRows], arch: Arch, traced_waves: int | None = None) -> LaunchOut | None:
    """The launch from the most trusted file whose rows of the kernel's name have a grid and a
    workgroup size, matched to the traced dispatch (hotspot/att/launch_match.py)."""
    from hotspot.arch.products import find_product

    product = find_product(arch.product) if arch.product else None
    same = product is not None and product.gfx == arch.gfx
    wave_size = arch.target.wave_size if arch.target is not None else None
    for k in found:
        out = match_launch(k.rows, str(k.path), k.run_id, traced_waves, wave_size,
                           product.cus if same and product else None,
                           product.peak_hbm_gbps if same and product else None)
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
        OccupancyGapEvidence(occ.waves_per_simd, a.mean_waves_per_simd, a.peak_waves_per_simd, ratio,
                             OCCUPANCY_GAP_RATIO),
        "give each CU more work in flight: a larger grid or more workgroups per CU, persistent "
        "workgroups, or overlap with other kernels; compare with the kernel's grid size")
