"""Use case `hotspot pmc`: read counter files, join passes, compute L2/fabric metrics and verdicts."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from hotspot.arch.counter_semantics import (
    ALL_SETS,
    ArchCounters,
    guess_arch_from_counters,
    wanted_counters,
)
from hotspot.arch.targets import counters_for_arch, normalize_gfx
from hotspot.capture import CounterFile, load_counter_files
from hotspot.errors import EXIT_UNUSABLE_COUNTERS, UsageError
from hotspot.pmc.analysis import (
    CounterPlan,
    DispatchCalc,
    DispatchReport,
    KernelReport,
    dispatch_metrics,
    kernel_metrics,
    kernel_sort_key,
)
from hotspot.pmc.join import JoinedDispatch, join_files
from hotspot.pmc.peak import choose_peak
from hotspot.pmc.verdicts import THRESHOLDS
from hotspot.result import Result
from hotspot.record import record
from hotspot.userregex import UserRegex, user_regex

COMMAND = "pmc"
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")


@record
class InputSummary:
    path: str
    layout: str
    dispatches: int
    counters_found: int           # distinct counter names in the file
    all_zero: bool


@record
class ArchDecision:
    arch: str | None
    source: str
    candidates: list[str]



@record
class Filters:
    """The --kernel / --dispatch filters the report was made with."""

    kernel: str | None
    dispatches: list[int] | None

@record
class PmcData:
    inputs: list[InputSummary]
    join: str
    join_reason: str
    arch: str | None
    arch_source: str
    arch_candidates: list[str]
    byte_formula: str | None
    peak_gbps: float | None
    peak_source: str
    ideal_bytes_per_dispatch: float | None
    filters: Filters
    thresholds: dict[str, float]
    kernels: list[KernelReport]
    dispatches: list[DispatchReport] | None    # only with per_dispatch=True


def analyze_pmc(paths: list[Path], *, kernel: str | None = None, dispatches: list[int] | None = None,
                ideal_bytes: float | None = None, arch: str | None = None,
                peak_gbps: float | None = None, per_dispatch: bool = False) -> Result[PmcData]:
    kernel_re = _compile(kernel)
    if ideal_bytes is not None and not ideal_bytes > 0:
        raise UsageError(f"--ideal-bytes must be positive (got {ideal_bytes})", "give bytes per dispatch")
    if peak_gbps is not None and not peak_gbps > 0:
        raise UsageError(f"--peak-gbps must be positive (got {peak_gbps})", "give GB/s, e.g. 5300")
    if arch is not None and not _GFX.match(arch.lower()):
        raise UsageError(f"--arch {arch!r} is not a gfx target name", "e.g. --arch gfx942")

    files = load_counter_files([Path(p) for p in paths])
    warnings: list[str] = []
    for f in files:
        warnings.extend(f.warnings)
        if f.all_zero:
            warnings.append(f"{f.path}: every counter value is 0 (counters read 0 on some parts and "
                            "power modes); hit rates and bytes from it are not meaningful")
    decision = decide_arch(files, arch)
    plan = plan_counters(decision, files)
    if decision.arch is None and len(plan.specs) > 1:
        cands = ", ".join(decision.candidates)
        warnings.append(f"arch undecided ({decision.source}; candidates: {cands}); fabric bytes are "
                        "a range over the candidates' formulas; pass --arch to make them exact")
    elif decision.arch is None:
        warnings.append(f"arch unknown ({decision.source}); no fabric bytes; pass --arch")
    elif not plan.specs:
        warnings.append(f"no fabric-byte formula for {decision.arch}; only the L2 hit rate is reported")
    collected = _warn_unused(files, plan, warnings)

    joined = join_files(files)
    warnings.extend(joined.warnings)
    selected = [d for d in joined.dispatches
                if (kernel_re is None or kernel_re.search(d.kernel))
                and (not dispatches or d.dispatch_id in dispatches)]
    if not selected:
        names = sorted({d.kernel for d in joined.dispatches})
        shown = "; ".join(n[:60] for n in names[:5])
        raise UsageError(f"no dispatch matches the filters (kernel={kernel!r}, dispatch={dispatches})",
                         f"kernels present: {shown}")

    peak = choose_peak(peak_gbps, [h for f in files for h in f.peak_hints],
                       [n for f in files for n in f.product_names])
    calcs_by_kernel: dict[str, list[DispatchCalc]] = defaultdict(list)
    all_calcs = []
    for d in selected:
        calc = dispatch_metrics(d, plan, peak.gbps, ideal_bytes)
        calcs_by_kernel[d.kernel].append(calc)
        all_calcs.append(calc)
    kernels = sorted((kernel_metrics(name, calcs, plan, peak.gbps, peak.source, ideal_bytes)
                      for name, calcs in calcs_by_kernel.items()), key=kernel_sort_key)
    _warn_kernels(kernels, plan, [c.report for c in all_calcs], warnings)

    data = PmcData(
        inputs=[InputSummary(str(f.path), f.layout, len(f.dispatches), len(f.counter_names),
                             f.all_zero) for f in files],
        join=joined.method, join_reason=joined.reason,
        arch=decision.arch, arch_source=decision.source, arch_candidates=decision.candidates,
        byte_formula=plan.specs[0].formula if len(plan.specs) == 1 and plan.specs[0].formula else None,
        peak_gbps=peak.gbps, peak_source=peak.source, ideal_bytes_per_dispatch=ideal_bytes,
        filters=Filters(kernel, sorted(dispatches) if dispatches else None),
        thresholds=dict(THRESHOLDS), kernels=kernels,
        dispatches=[c.report for c in all_calcs] if per_dispatch else None)
    usable = _usable(selected, plan)
    if not usable and collected and not all(f.all_zero for f in files):  # not said by a warning above
        warnings.append("every counter hotspot reads is 0 on the selected dispatches: no hit rate or "
                        "fabric bytes to report")
    return Result(COMMAND, data, list(dict.fromkeys(warnings)), 0 if usable else EXIT_UNUSABLE_COUNTERS)


def _usable(selected: list[JoinedDispatch], plan: CounterPlan) -> bool:
    """Does any selected dispatch hold a non-zero value of a counter hotspot reads? When none
    does (not collected, or read 0), there is no number to give: exit 9 (docs/exit-codes.md)."""
    read = set(plan.display) | set(wanted_counters())
    return any(v for d in selected for name, v in d.counters.items() if name in read)


def _compile(pattern: str | None) -> UserRegex | None:
    if pattern is None:
        return None
    return user_regex(pattern, "--kernel", "quote the pattern, e.g. --kernel 'gemm.*'")


def decide_arch(files: list[CounterFile], arch: str | None) -> ArchDecision:
    """--arch > side files / rocpd agents (all inputs must agree: counters of two GPUs summed
    are wrong numbers) > counter names: every hint weighed by the one arch decision
    (hotspot/arch/decide.py); the counter names are read only when nothing else names a target."""
    from hotspot.arch.decide import COUNTERS, OVERRIDE, SIDE_FILE, ArchHint as Evidence, decide

    if arch is not None:
        gfx = normalize_gfx(arch)  # gfx942:sramecc+ names gfx942
        return ArchDecision(decide([Evidence(gfx, "--arch", OVERRIDE)]).gfx, "--arch", [gfx])
    hints = [Evidence(normalize_gfx(h.arch), h.source, SIDE_FILE, h.product)
             for f in files for h in f.arch_hints]
    candidates = sorted({h.name for h in hints})
    if not hints:
        guess = guess_arch_from_counters(set().union(*(f.counter_names for f in files)))
        source = f"counter names: {guess.reason}"
        candidates = list(guess.candidates)
        if guess.arch is None:  # nothing names one target: undecided, with the candidates
            return ArchDecision(None, source, candidates)
        hints = [Evidence(guess.arch, source, COUNTERS)]
    decided = decide(hints, on_conflict="refuse")
    return ArchDecision(decided.gfx, decided.source, candidates)


def plan_counters(decision: ArchDecision, files: list[CounterFile]) -> CounterPlan:
    specs: list[ArchCounters] = []
    for name in ([decision.arch] if decision.arch else decision.candidates):
        spec = counters_for_arch(name)
        if spec is not None and spec.read_requests and spec not in specs:
            specs.append(spec)
    hit_spec = (counters_for_arch(decision.arch) if decision.arch else None) \
        or (specs[0] if specs else _spec_by_names(files))
    display: dict[str, None] = {}
    if hit_spec is not None:
        display[hit_spec.hit] = None
        display[hit_spec.miss] = None
    for spec in specs:
        for name in spec.counters:
            display[name] = None
    first = specs[0] if specs else None
    return CounterPlan(
        specs=tuple(specs),
        hit=hit_spec.hit if hit_spec else None, miss=hit_spec.miss if hit_spec else None,
        read_requests=first.read_requests if first else None,
        req_32b=first.req_32b if first else None,
        display=tuple(display))


def _spec_by_names(files: list[CounterFile]) -> ArchCounters | None:
    """Unknown arch: use whichever L2 hit/miss naming the files hold."""
    present = {c for f in files for d in f.dispatches for c in d.counters}
    for spec in ALL_SETS:
        if spec.hit in present and spec.miss in present:
            return spec
    return None


def _warn_unused(files: list[CounterFile], plan: CounterPlan, warnings: list[str]) -> bool:
    """Warn when none of the counters hotspot reads was collected; True when some were."""
    present = {c for f in files for d in f.dispatches for c in d.counters}
    if not present & set(plan.display) and not present & set(wanted_counters()):
        found = sorted({n for f in files for n in f.counter_names})
        shown = ", ".join(found[:8]) + (" ..." if len(found) > 8 else "")
        need = ", ".join(plan.display) or "TCC_HIT_sum, TCC_MISS_sum, TCC_EA0_RDREQ_sum, ..."
        warnings.append(f"none of the L2/fabric counters hotspot uses were collected (found: {shown}); "
                        f"collect {need}")
        return False
    return True


def _warn_kernels(kernels: list[KernelReport], plan: CounterPlan, reports: list[DispatchReport],
                  warnings: list[str]) -> None:
    for k in kernels:
        name = k.kernel if len(k.kernel) <= 60 else k.kernel[:59] + "…"
        if k.inconsistent_dispatches:
            warnings.append(
                f"{name}: on {k.inconsistent_dispatches} of {k.dispatches} dispatches the request-size "
                "counters exceed the read-request total (they come from different replay passes); "
                "the formula was applied as documented")
        part = k.counters.get(plan.req_32b) if plan.req_32b else None
        whole = k.counters.get(plan.read_requests) if plan.read_requests else None
        if part is not None and whole is not None and part > whole:
            warnings.append(f"{name}: {plan.req_32b} ({part:,.0f}) exceeds {plan.read_requests} "
                            f"({whole:,.0f}), a share of more than 100%: the counters are "
                            "inconsistent (different replay passes, or a damaged file); the 32-byte "
                            "request share is not shown")
        mine = [r for r in reports if r.kernel == k.kernel]
        for counter in plan.display:
            have = sum(1 for r in mine if r.counters.get(counter) is not None)
            if 0 < have < len(mine):
                warnings.append(f"{name}: {counter} collected for {have} of {len(mine)} dispatches; "
                                "kernel sums use only those")
        if k.fabric_read_bytes.known and not k.fabric_read_bytes.exact and k.fabric_read_bytes.missing:
            warnings.append(f"{name}: fabric bytes are a range; collect "
                            f"{' or '.join(k.fabric_read_bytes.missing)} to make them exact")
        if k.duration_ns is None:
            warnings.append(f"{name}: no kernel timestamps, so no achieved bandwidth "
                            "(older counter_collection layouts lack Start/End_Timestamp)")
