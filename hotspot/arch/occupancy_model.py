"""Theoretical occupancy (waves per SIMD) exactly as HARDWARE.md §1, with limiter and next steps.

waves/SIMD = min(hardware cap, VGPR limit, SGPR limit, LDS limit, workgroup-slot limit).
Each limit is a pure function of one resource (the LDS limit also of the workgroup size); every one
but the workgroup-slot limit is non-increasing in its resource, so the "next step" for a binding
limit is found by binary search on the same function: the largest resource value that gives more
waves. Applying it yields exactly `target_waves` for that limit (the next count the limit can reach:
usually +1, more when the limit moves in steps, e.g. LDS with an 8-wave workgroup).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field

from hotspot.arch.targets import SEPARATE, ArchTarget, get_target
from hotspot.errors import InputError
from hotspot.record import record

LIMIT_NAMES = ("hardware", "vgpr", "sgpr", "lds", "workgroup")
LDS_UNKNOWN_NOTE = ("LDS limit unknown: no LDS size was found for this kernel (a kernel trace or rocpd "
                    "db near the capture, or one named with --meta, gives it; `hotspot occupancy "
                    "--lds BYTES --wg N` shows what a given size allows).")
# Primary limiter on ties, in this order: registers first (the usual fix), then LDS, then the
# workgroup shape (the most invasive change).
PRIMARY_ORDER = ("vgpr", "sgpr", "lds", "workgroup")
# LLVM's older SGPR step table (≤ 100 → 8 waves, else 7) disagrees with the closed form only here.
LLVM_OLD_SGPR_TABLE_DISAGREES = range(97, 101)


def align_to(value: int, granule: int) -> int:
    return -(-value // granule) * granule


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# --- the five limits -------------------------------------------------------------------------

def vgpr_total(target: ArchTarget, vgpr: int, agpr: int) -> int:
    """The VGPR quantity that decides occupancy (the `T` of §1).

    Unified file: arch VGPRs rounded to the AGPR base alignment, plus AGPRs (arch alone if no AGPRs).
    Separate files (gfx908): the larger of the two, since each file is allocated alike.
    """
    if target.vgpr_file == SEPARATE:
        return max(vgpr, agpr)
    return align_to(vgpr, target.agpr_base_align) + agpr if agpr > 0 else vgpr


def vgpr_allocated(target: ArchTarget, total: int) -> int:
    # A wave always holds at least one granule.
    return align_to(max(total, 1), target.vgpr_alloc_granule)


def vgpr_waves(target: ArchTarget, total: int) -> int:
    return min(target.max_waves_per_simd, target.vgprs_per_lane // vgpr_allocated(target, total))


def sgpr_total(target: ArchTarget, sgpr: int, includes_implicit: bool) -> int:
    return sgpr if includes_implicit else sgpr + target.implicit_sgprs


def sgpr_waves(target: ArchTarget, total: int) -> int:
    allocated = align_to(max(total, 1), target.sgpr_alloc_granule)
    return min(target.max_waves_per_simd, target.sgprs_per_simd // allocated)


def waves_per_workgroup(target: ArchTarget, wg_threads: int) -> int:
    return ceil_div(wg_threads, target.wave_size)


def _waves_from_workgroups(target: ArchTarget, workgroups_per_cu: int, wg_waves: int) -> int:
    # §1: waves/SIMD = ceil(WG_per_CU × waves_per_WG / SIMDs), capped by the hardware limit.
    return min(target.max_waves_per_simd, ceil_div(workgroups_per_cu * wg_waves, target.simds_per_cu))


def lds_workgroups_per_cu(target: ArchTarget, lds_bytes: int, granule: int | None = None) -> int | None:
    """Workgroups one CU's LDS holds; None when the kernel uses no LDS (no LDS limit)."""
    if lds_bytes <= 0:
        return None
    return target.lds_per_cu_bytes // align_to(lds_bytes, granule or target.lds_alloc_granule_bytes)


def lds_waves(target: ArchTarget, lds_bytes: int, wg_waves: int, granule: int | None = None) -> int:
    per_cu = lds_workgroups_per_cu(target, lds_bytes, granule)
    if per_cu is None:
        return target.max_waves_per_simd
    return _waves_from_workgroups(target, per_cu, wg_waves)


def slot_workgroups_per_cu(target: ArchTarget, wg_waves: int) -> int:
    """Workgroup slots per CU: the single-wave exception, else min(waves_per_CU // N, 16)."""
    if wg_waves == 1:
        return target.single_wave_workgroups_per_cu
    return min(target.max_waves_per_cu // wg_waves, target.max_workgroups_per_cu)


def workgroup_waves(target: ArchTarget, wg_waves: int) -> int:
    return _waves_from_workgroups(target, slot_workgroups_per_cu(target, wg_waves), wg_waves)


# --- result types ----------------------------------------------------------------------------

@record
class OccupancyInputs:
    vgpr: int                  # arch VGPRs per wave
    agpr: int                  # AGPRs (or allocation − arch, as profilers report Accum_VGPR_Count)
    sgpr: int | None
    lds_bytes: int             # LDS per workgroup (static + dynamic)
    wg_threads: int | None     # work-items per workgroup
    sgpr_includes_implicit: bool


@record
class NextStep:
    target_waves: int
    resource: str              # vgpr_total | vgpr_max | sgpr | lds_bytes | wg_threads
    current: int
    max_allowed: int
    reduce_by: int
    message: str
    alternatives: dict[str, int] = field(default_factory=dict)


@record
class OccupancyDetails:
    vgpr_total: int            # T of §1 (unified) or max(arch, agpr) (separate files)
    vgpr_allocated: int        # T rounded to the allocation granule
    sgpr_total: int | None     # incl. implicit SGPRs
    sgpr_allocated: int | None
    waves_per_workgroup: int | None
    lds_allocated_bytes: int | None
    workgroups_per_cu_by_lds: int | None
    workgroups_per_cu_by_slots: int | None


@record(frozen=False)
class Limits:
    """Waves/SIMD each limit allows (None: its input is unknown), one field per LIMIT_NAMES. A limit
    the model did not compute is not set and not in the JSON (an analysis without a VGPR count has
    none: `{}`); init=False fields, set in LIMIT_NAMES order by `of`."""

    hardware: int | None = field(default=None, init=False)
    vgpr: int | None = field(default=None, init=False)
    sgpr: int | None = field(default=None, init=False)
    lds: int | None = field(default=None, init=False)
    workgroup: int | None = field(default=None, init=False)

    @classmethod
    def of(cls, values: dict[str, int | None]) -> Limits:
        out = cls()
        for name in LIMIT_NAMES:
            if name in values:
                setattr(out, name, values[name])
        return out

    def __getitem__(self, name: str) -> int | None:
        """The limit named `name` (views and the candidate comparison go by name)."""
        if name not in LIMIT_NAMES:
            raise KeyError(name)
        value: int | None = getattr(self, name)
        return value

    def items(self) -> list[tuple[str, int | None]]:
        """(name, waves) of the limits computed, in LIMIT_NAMES order."""
        return [(name, getattr(self, name)) for name in LIMIT_NAMES if name in vars(self)]


@record
class Occupancy:
    arch: str
    inputs: OccupancyInputs
    waves_per_simd: int
    limiter: str                       # primary binding limit ("hardware" when at the cap)
    limiters: tuple[str, ...]          # every binding limit, primary first
    limits: Limits                     # waves/SIMD each limit allows; None = input unknown
    next_step: dict[str, NextStep]     # per binding limiter below the cap
    notes: tuple[str, ...]
    details: OccupancyDetails


# --- validation ------------------------------------------------------------------------------

def _check_int(name: str, value: object, low: int, high: int, hint: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be an integer, got {value!r}", hint, code="bad-value")
    if not low <= value <= high:
        raise InputError(f"{name} {value} is out of range {low}..{high}", hint, code="bad-value")


def max_sgpr_value(target: ArchTarget, includes_implicit: bool) -> int:
    if includes_implicit:  # an allocation: user SGPRs + implicit, rounded to the granule
        return align_to(target.max_user_sgprs_per_wave + target.implicit_sgprs, target.sgpr_alloc_granule)
    return target.max_user_sgprs_per_wave


def validate_inputs(target: ArchTarget, inputs: OccupancyInputs) -> None:
    """InputError naming the field for anything the hardware cannot run."""
    g = target.gfx
    _check_int("vgpr", inputs.vgpr, 0, target.max_arch_vgprs_per_wave,
               f"{g} allows at most {target.max_arch_vgprs_per_wave} arch VGPRs per wave")
    if target.vgpr_file == SEPARATE:
        _check_int("agpr", inputs.agpr, 0, target.max_agprs_per_wave,
                   f"{g} allows at most {target.max_agprs_per_wave} AGPRs per wave")
    else:
        room = target.vgprs_per_lane - align_to(inputs.vgpr, target.agpr_base_align)
        _check_int("agpr", inputs.agpr, 0, room,
                   f"{g}: arch VGPRs (rounded to {target.agpr_base_align}) + AGPRs must fit the "
                   f"{target.vgprs_per_lane}-register file")
    if inputs.sgpr is not None:
        _check_int("sgpr", inputs.sgpr, 0, max_sgpr_value(target, inputs.sgpr_includes_implicit),
                   f"{g} allows at most {target.max_user_sgprs_per_wave} SGPRs per wave "
                   f"(+{target.implicit_sgprs} implicit); a profiler's SGPR_Count is an allocation that "
                   "already includes them")
    _check_int("lds_bytes", inputs.lds_bytes, 0, target.max_lds_per_workgroup_bytes,
               f"{g} has {target.max_lds_per_workgroup_bytes} bytes of LDS per workgroup")
    if inputs.wg_threads is not None:
        _check_int("wg_threads", inputs.wg_threads, 1, target.max_workgroup_threads,
                   f"a workgroup has 1..{target.max_workgroup_threads} work-items")


# --- next steps ------------------------------------------------------------------------------

def _largest_better(f: Callable[[int], int], current: int, better: Callable[[int], bool]) -> int | None:
    """Largest r in [0, current) with better(f(r)); f non-increasing, so `better` holds on a prefix."""
    if current <= 0 or not better(f(0)):
        return None
    lo, hi = 0, current - 1       # invariant: better(f(lo)); answer in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if better(f(mid)):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _step(f: Callable[[int], int], current: int) -> tuple[int, int] | None:
    """(max_allowed, target_waves) for the next wave count a monotone limit can reach."""
    now = f(current)
    best = _largest_better(f, current, lambda w: w > now)
    return None if best is None else (best, f(best))


def per_simd(n: int | None) -> str:
    """`1 wave/SIMD`, `3 waves/SIMD`."""
    return f"{n} wave/SIMD" if n == 1 else f"{n} waves/SIMD"


def _fmt_bytes(n: int) -> str:
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n:,} B"


def _vgpr_step(target: ArchTarget, inp: OccupancyInputs) -> NextStep | None:
    total = vgpr_total(target, inp.vgpr, inp.agpr)
    found = _step(lambda t: vgpr_waves(target, t), total)
    if found is None:
        return None
    max_total, want = found
    alternatives: dict[str, int] = {}
    if target.vgpr_file == SEPARATE:
        message = (f"{want} waves/SIMD needs arch VGPRs and AGPRs each ≤ {max_total} "
                   f"(now max {total}): free {total - max_total}")
        return NextStep(want, "vgpr_max", total, max_total, total - max_total, message)
    if inp.agpr > 0:
        reach = lambda w: w >= want  # noqa: E731 - tiny predicate
        arch_only = _largest_better(lambda a: vgpr_waves(target, vgpr_total(target, a, inp.agpr)),
                                    inp.vgpr, reach)
        agpr_only = _largest_better(lambda g: vgpr_waves(target, vgpr_total(target, inp.vgpr, g)),
                                    inp.agpr, reach)
        if arch_only is not None:
            alternatives["vgpr"] = arch_only
        if agpr_only is not None:
            alternatives["agpr"] = agpr_only
    message = (f"{want} waves/SIMD needs total VGPRs ≤ {max_total} (now {total}): "
               f"free {total - max_total}")
    ways = []  # a suggestion to drop a whole register class is not useful; the data keeps it
    if alternatives.get("vgpr"):
        ways.append(f"arch VGPRs ≤ {alternatives['vgpr']} with AGPRs unchanged")
    if alternatives.get("agpr"):
        ways.append(f"AGPRs ≤ {alternatives['agpr']} with arch VGPRs unchanged")
    if ways:
        message += f" (e.g. {', or '.join(ways)})"
    return NextStep(want, "vgpr_total", total, max_total, total - max_total, message, alternatives)


def _sgpr_step(target: ArchTarget, inp: OccupancyInputs) -> NextStep | None:
    assert inp.sgpr is not None
    inc = inp.sgpr_includes_implicit
    found = _step(lambda s: sgpr_waves(target, sgpr_total(target, s, inc)), inp.sgpr)
    if found is None:
        return None
    best, want = found
    what = "SGPRs (incl. implicit)" if inc else "SGPRs"
    message = f"{want} waves/SIMD needs {what} ≤ {best} (now {inp.sgpr}): free {inp.sgpr - best}"
    return NextStep(want, "sgpr", inp.sgpr, best, inp.sgpr - best, message)


def _lds_step(target: ArchTarget, inp: OccupancyInputs, wg_waves: int) -> NextStep | None:
    found = _step(lambda b: lds_waves(target, b, wg_waves), inp.lds_bytes)
    if found is None:
        return None
    best, want = found
    message = (f"{want} waves/SIMD needs LDS ≤ {_fmt_bytes(best)} per workgroup "
               f"(now {_fmt_bytes(inp.lds_bytes)}): free {_fmt_bytes(inp.lds_bytes - best)}")
    return NextStep(want, "lds_bytes", inp.lds_bytes, best, inp.lds_bytes - best, message)


def _workgroup_step(target: ArchTarget, inp: OccupancyInputs, wg_waves: int) -> NextStep | None:
    # Not monotone in the workgroup size: scan the smaller shapes (largest first) and report the
    # nearest larger shape as an alternative.
    assert inp.wg_threads is not None
    now = workgroup_waves(target, wg_waves)
    smaller = next((n for n in range(wg_waves - 1, 0, -1) if workgroup_waves(target, n) > now), None)
    if smaller is None:
        return None
    want = workgroup_waves(target, smaller)
    best = smaller * target.wave_size
    alternatives = {}
    max_waves = target.max_workgroup_threads // target.wave_size
    larger = next((n for n in range(wg_waves + 1, max_waves + 1) if workgroup_waves(target, n) >= want), None)
    message = (f"{want} waves/SIMD needs a workgroup of ≤ {best} work-items ({smaller} waves; now "
               f"{inp.wg_threads}, {wg_waves} waves): shrink by {inp.wg_threads - best}")
    if larger is not None:
        alternatives["wg_threads_larger"] = larger * target.wave_size
        message += f", or grow it to {larger * target.wave_size} ({larger} waves)"
    return NextStep(want, "wg_threads", inp.wg_threads, best, inp.wg_threads - best, message, alternatives)


# --- the model -------------------------------------------------------------------------------

def compute_occupancy(target: ArchTarget | str, vgpr: int, agpr: int = 0, sgpr: int | None = None,
                      lds_bytes: int | None = 0, wg_threads: int | None = None, *,
                      sgpr_includes_implicit: bool = False) -> Occupancy:
    """Theoretical waves per SIMD, the binding limit(s) and how far each must move to gain a wave.

    `sgpr` counts the kernel's own SGPRs; pass `sgpr_includes_implicit=True` for an allocation that
    already includes VCC/FLAT_SCRATCH/XNACK (rocprofv3 `SGPR_Count`, rocpd `sgpr_count`).
    `lds_bytes=None` means the LDS size is unknown: the LDS limit is then unknown too (null), never
    taken as "no LDS".
    """
    if isinstance(target, str):
        target = get_target(target)
    lds_known = lds_bytes is not None
    lds_bytes = lds_bytes or 0
    inp = OccupancyInputs(vgpr, agpr, sgpr, lds_bytes, wg_threads, sgpr_includes_implicit)
    validate_inputs(target, inp)
    notes: list[str] = []
    cap = target.max_waves_per_simd

    total = vgpr_total(target, vgpr, agpr)
    limits: dict[str, int | None] = {"hardware": cap, "vgpr": vgpr_waves(target, total)}

    s_total = s_alloc = None
    if sgpr is None:
        limits["sgpr"] = None
        notes.append("SGPR limit unknown: no SGPR count given.")
    else:
        s_total = sgpr_total(target, sgpr, sgpr_includes_implicit)
        s_alloc = align_to(max(s_total, 1), target.sgpr_alloc_granule)
        limits["sgpr"] = sgpr_waves(target, s_total)

    wg_waves = None if wg_threads is None else waves_per_workgroup(target, wg_threads)
    lds_alloc = align_to(lds_bytes, target.lds_alloc_granule_bytes) if lds_bytes > 0 else None
    by_lds = lds_workgroups_per_cu(target, lds_bytes)
    if not lds_known:
        limits["lds"] = None
        notes.append(LDS_UNKNOWN_NOTE)
    elif lds_bytes == 0:
        limits["lds"] = cap
    elif wg_waves is None:
        limits["lds"] = None
        notes.append("LDS limit unknown: it needs the workgroup size.")
    else:
        limits["lds"] = lds_waves(target, lds_bytes, wg_waves)
    by_slots = None if wg_waves is None else slot_workgroups_per_cu(target, wg_waves)
    if wg_waves is None:
        limits["workgroup"] = None
        notes.append("Workgroup-slot limit unknown: no workgroup size given.")
    else:
        limits["workgroup"] = workgroup_waves(target, wg_waves)

    waves = min(v for v in limits.values() if v is not None)
    limiters: tuple[str, ...]
    if waves == cap:
        limiter, limiters = "hardware", ("hardware",)
    else:
        limiters = tuple(name for name in PRIMARY_ORDER if limits[name] == waves)
        limiter = limiters[0]

    next_step: dict[str, NextStep] = {}
    for name in limiters:
        step = None
        if name == "vgpr":
            step = _vgpr_step(target, inp)
        elif name == "sgpr":
            step = _sgpr_step(target, inp)
        elif name == "lds" and wg_waves is not None:
            step = _lds_step(target, inp, wg_waves)
        elif name == "workgroup" and wg_waves is not None:
            step = _workgroup_step(target, inp, wg_waves)
        if step is not None:
            next_step[name] = step

    notes.extend(_notes(target, inp, total, s_total, wg_waves, limits, limiters))
    details = OccupancyDetails(total, vgpr_allocated(target, total), s_total, s_alloc, wg_waves,
                               lds_alloc, by_lds, by_slots)
    return Occupancy(target.gfx, inp, waves, limiter, limiters, Limits.of(limits), next_step, tuple(notes),
                     details)


def _notes(target: ArchTarget, inp: OccupancyInputs, total: int, s_total: int | None,
           wg_waves: int | None, limits: dict[str, int | None], limiters: tuple[str, ...]) -> list[str]:
    notes: list[str] = []
    if len(limiters) > 1:
        notes.append(f"{' and '.join(limiters)} each limit to {per_simd(limits[limiters[0]])}: all "
                     "of them must move to gain a wave.")
    if target.vgpr_file != SEPARATE and inp.agpr > target.max_agprs_per_wave:
        notes.append(f"agpr {inp.agpr} exceeds the {target.max_agprs_per_wave} AGPRs a wave can "
                     "address: read as allocation − arch VGPRs (how profilers report Accum_VGPR_Count).")
    if target.vgpr_file == SEPARATE and inp.agpr > 0:
        notes.append(f"{target.gfx} has separate arch and AGPR files: the larger of the two decides "
                     f"({total}).")
    if s_total is not None and s_total in LLVM_OLD_SGPR_TABLE_DISAGREES:
        notes.append(f"{s_total} SGPRs incl. implicit: LLVM's older step table (≤ 100 → 8 waves) and "
                     f"the closed form 800 // alignTo(n, 16) (→ {limits['sgpr']}) disagree here; "
                     "this uses the closed form.")
    if inp.sgpr is not None and not inp.sgpr_includes_implicit and not target.implicit_sgprs_always:
        notes.append(f"{target.gfx} adds up to {target.implicit_sgprs} implicit SGPRs (VCC, "
                     "FLAT_SCRATCH, XNACK) depending on the kernel; all are assumed.")
    if inp.lds_bytes > 0 and wg_waves is not None:
        rounded = lds_waves(target, inp.lds_bytes, wg_waves)
        unrounded = lds_waves(target, inp.lds_bytes, wg_waves, granule=1)
        if unrounded != rounded:
            notes.append(f"LDS {inp.lds_bytes} B rounds up to the {target.lds_alloc_granule_bytes} B "
                         f"allocation granule: {per_simd(rounded)}, not the {unrounded} that "
                         "unrounded math (as LLVM's) gives.")
        alt = target.lds_alloc_granule_alt_bytes
        if alt is not None:
            alt_waves = lds_waves(target, inp.lds_bytes, wg_waves, granule=alt)
            if alt_waves != rounded:
                notes.append(f"With a {alt} B LDS granule (seen in some encodings, unverified) the LDS "
                             f"limit would be {per_simd(alt_waves)} instead of {rounded}.")
    return notes


# --- unknown gfx9 variant --------------------------------------------------------------------

@record
class CandidateOccupancy:
    """Occupancy under each candidate arch when the exact gfx9 variant is undecided."""

    by_arch: dict[str, Occupancy]
    excluded: dict[str, str]           # candidate -> why the inputs cannot run there
    agree: bool                        # same waves and limits under every remaining candidate
    differing_limits: tuple[str, ...]  # limit names whose value differs between candidates
    summary: str


def occupancy_candidates(gfx_candidates: Iterable[str], vgpr: int, agpr: int = 0,
                         sgpr: int | None = None, lds_bytes: int | None = 0, wg_threads: int | None = None,
                         *, sgpr_includes_implicit: bool = False) -> CandidateOccupancy:
    by_arch: dict[str, Occupancy] = {}
    excluded: dict[str, str] = {}
    first_error: InputError | None = None
    for gfx in dict.fromkeys(gfx_candidates):  # keep order, drop duplicates
        target = get_target(gfx)
        try:
            by_arch[target.gfx] = compute_occupancy(target, vgpr, agpr, sgpr, lds_bytes, wg_threads,
                                                    sgpr_includes_implicit=sgpr_includes_implicit)
        except InputError as err:
            excluded[target.gfx] = err.message
            first_error = first_error or err
    if not by_arch:
        if first_error is not None:
            raise first_error
        raise InputError("no candidate architecture given", "pass at least one gfx target")
    results = list(by_arch.values())
    differing = tuple(name for name in LIMIT_NAMES
                      if len({r.limits[name] for r in results}) > 1)
    agree = not differing and len({r.waves_per_simd for r in results}) == 1
    if agree:
        summary = (f"{per_simd(results[0].waves_per_simd)} ({results[0].limiter}-bound) under every "
                   f"candidate: {', '.join(by_arch)}")
    else:
        summary = "; ".join(f"{gfx}: {per_simd(r.waves_per_simd)} ({r.limiter}-bound)"
                            for gfx, r in by_arch.items())
    if excluded:
        summary += "; excluded " + ", ".join(f"{gfx} ({why})" for gfx, why in excluded.items())
    return CandidateOccupancy(by_arch, excluded, agree, differing, summary)
