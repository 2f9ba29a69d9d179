"""Use case: compare two analyses (BEFORE vs AFTER) of the same kernel: same code or not, then
every row with an interval and a test against capture-to-capture noise.

Each side is a dispatch dir (or a folder holding several) or a saved `hotspot analyze --format json`
output. Rows: totals, stall per category, stall per source line, blamed stall per load (from the
wait attribution). First the two instruction sequences are compared (hotspot/diff/code.py): when
the code is the same, source lines and loads are grouped by the after side's source locations on
both sides (a recompile that only moved debug info compares like for like); else source lines are
matched by file:line, then by the ISA mnemonics of their instructions.

Significance (hotspot/diff/stats.py, hotspot/diff/noise.py): each row is compared as cycles per
execution of its instructions (a row in a loop: per iteration; totals per executed instruction when
the code is the same, per wave when it is not), so waves that ran more or fewer loop trips are not
a change. The traced workgroups of a dispatch dir are resampled (bootstrap, seeded) with a
capture-to-capture factor on top (the floor estimated from three captures and treated as known,
or the side's replicate dispatches when they show more); q-values control the
false discovery rate over the tested rows. A saved analysis holds no per-wave values: only the
totals are tested then, on the floor alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field, replace
from operator import add
from pathlib import Path
from typing import TYPE_CHECKING

from hotspot.diff.code import CodeComparison, compare_code, matched_lines
from hotspot.diff.rows import (
    TOTAL_FIELDS,
    SumMemo,
    Group,
    Table,
    groups,
    match,
    pooled,
    series,
    totals_table,
)
from hotspot.diff.noise import (
    CAPTURE_NOISE_SD,
    COLD_EXECUTIONS_PER_WAVE,
    DEFAULT_SEED,
    FLOOR_DF,
    LEVEL,
    MAX_REPLICATES,
    MIN_SHARE_OF_TOTAL,
    MIN_WAVES,
    MIN_WORKGROUPS,
    REPLICATES,
    WIDE_INTERVAL,
)
from hotspot.att.model import AnalysisMode, DispatchAnalysis, MultiAnalysis
from hotspot.errors import EXIT_NOT_COMPARABLE, InputError, UsageError
from hotspot.record import record
from hotspot.strenum import TextEnum
from hotspot.userregex import user_regex

if TYPE_CHECKING:
    from hotspot.att.model import AnalyzeOptions
    from hotspot.att.wave_samples import DispatchSamples
    from hotspot.result import Result
    from hotspot.diff.stats import RowTest

class RowKind(TextEnum):
    """What a diff row sums: written to JSON and text as its value, and equal to that string."""

    TOTAL = "total"
    CATEGORY = "category"
    LOOP = "loop"
    LINE = "line"
    LOAD = "load"


class MatchedBy(TextEnum):
    """How a row of one side found its row on the other."""

    KEY = "key"  # the same key (same location, or same code grouped by the after side's)
    STRUCTURE = "structure"  # a loop: its instructions and position (boundaries moved)
    MNEMONICS = "mnemonics"  # the ISA mnemonics of its instructions (a moved line or load)
    BEFORE_ONLY = "before-only"
    AFTER_ONLY = "after-only"


KINDS = tuple(RowKind)
# The headline: time per wave (latency: Σ instruction durations); stall is its breakdown.
HEADLINE = "total:latency"
STALL_TOTAL = "total:stall"
TOTAL_ORDER = (HEADLINE, STALL_TOTAL, "total:issue", "total:idle")


@record
class DiffRow:
    key: str
    kind: RowKind
    label: str  # human label ("k.py:40", "k.py:40 -> k.py:42" when matched by mnemonics)
    before: float  # cycles per traced wave
    after: float
    delta: float  # after - before
    delta_pct: float | None  # 100 * delta / before; null when before is 0
    rate_unit: str  # what before/after and the test are in: "per wave"
    # executions per wave of the row's instructions (a loop: of its header, i.e. iterations; a
    # load: of its producers), and cycles per execution: why a per-wave change happened
    executions_before: float | None
    executions_after: float | None
    per_execution_before: float | None
    per_execution_after: float | None
    change_pct: float | None  # tested rows: delta_pct (the per-wave change), same sign always
    ci_pct: list[float] | None  # [low, high] interval of change_pct at test.level
    p: float | None  # bootstrap p-value of "no change"; null when not tested
    q: float | None  # Benjamini-Hochberg q-value over the tested rows
    tested: bool
    not_tested: str  # why not ("" when tested)
    significant: bool  # tested, q <= 1 - level, and not a same-code run-to-run variation
    # same code with unchanged issue cycles: the row's interval excludes 0, but no code changed;
    # it varies run to run (clock, contention, which workgroups were traced)
    varies_run_to_run: bool
    matched_by: MatchedBy


@record
class SideInfo:
    path: str
    input: str  # "dispatch-dir" or "analyze-json"
    kernel: str
    dispatches: list[str]  # the analyses averaged on this side (2 = a replicate pair)
    waves: int
    total_stall: float
    samples: int  # waves resampled on this side (0: a saved analysis, no per-wave values)


@record
class NoiseInfo:
    method: str  # "waves+floor", "waves+replicates", "floor-only"
    test: str  # the resampling test, in words
    replicates: int
    seed: int
    level: float
    capture_sd_before: float  # σ of each side's capture factor (log scale)
    capture_sd_after: float
    floor_sd: float  # the floor (CAPTURE_NOISE_SD, measured: hotspot/diff/noise.py)
    replicate_sd: float | None  # measured by replicate dispatches, when a side has them
    min_share_of_total: float
    note: str
    # [traced waves resampled, workgroups they form, launch-round strata] per side; the workgroups
    # are what is drawn (hotspot/diff/workgroups.py)
    units_before: list[int] = field(default_factory=list)
    units_after: list[int] = field(default_factory=list)


@record
class DiffSummary:
    rows: int
    tested: int
    significant: int
    improved: int  # significant rows whose cycles per wave went down
    regressed: int
    varies_run_to_run: int  # same code: rows whose interval excludes 0 without a code change
    # the headline: latency (Σ instruction durations, cycles) per traced wave; null for two kernels
    latency_before: float | None
    latency_after: float | None
    latency_change_pct: float | None
    latency_ci_pct: list[float] | None
    latency_significant: bool
    # its breakdown: stall per traced wave
    total_stall_before: float | None
    total_stall_after: float | None
    total_stall_change_pct: float | None
    total_stall_ci_pct: list[float] | None
    total_stall_significant: bool
    noise_pct: float | None  # half-width of the latency's interval: the noise on this kernel
    verdict: str
    advice: str  # "" or what to capture to decide


@record(frozen=False)
class DiffResult:
    before: SideInfo
    after: SideInfo
    code: CodeComparison
    noise: NoiseInfo
    summary: DiffSummary
    rows: list[DiffRow] = field(default_factory=list)
    # "per-wave" when the sides traced different numbers of waves: every row's before/after is then
    # cycles per traced wave (a capture of 12 waves holds ~3x the cycles of one of 4); else "none"
    normalization: str = "none"
    unit: str = "cycles"
    comparable: bool = True  # False for two different kernels: nothing is called significant


@record(frozen=False)
class _Side:
    info: SideInfo
    analyses: list[DispatchAnalysis]  # 1 or 2 (replicates)
    samples: list["DispatchSamples"] = field(default_factory=list)  # per analysis (dispatch dirs)


# ---------------------------------------------------------------------------------------------
# loading


def load_side(path: Path, kernel: str | None, max_waves: int | None, warnings: list[str]) -> _Side:
    if path.is_file():
        return _side_from_json(path, kernel, warnings)
    if path.is_dir():
        return _side_from_dirs(path, kernel, max_waves, warnings)
    raise InputError(f"{path}: no such file or directory",
                     "pass a ui_output dispatch dir or a saved `hotspot analyze --format json` file")


def _side_from_json(path: Path, kernel: str | None, warnings: list[str]) -> _Side:
    from hotspot.att.load import read_analysis

    # a malformed, unreadable or foreign file is an InputError naming it (and the field)
    data, _saved_warnings = read_analysis(path)
    analyses = data.dispatches if isinstance(data, MultiAnalysis) else [data]
    analyses = [a for a in analyses if a.mode == AnalysisMode.CYCLES] or analyses
    chosen = _pick(analyses, kernel, path)
    for a in chosen:  # every value diff reads, checked here so a bad one is named now
        _check_values(path, a)
    info = _info(path, "analyze-json", chosen)
    for a in chosen:
        held, executed = len(a.instructions), a.dispatch.executed_instructions
        if a.mode == AnalysisMode.CYCLES and held < executed:
            # the code comparison and every row would read a cut listing as the kernel
            raise InputError(f"{path}: saved with a row cut-off (--topk {a.asked_topk}): it holds "
                             f"{held} of the kernel's {executed} executed instructions, so the code "
                             "cannot be compared nor the rows summed",
                             "save it again with `hotspot analyze DIR --format json --topk 0`, or "
                             "diff the dispatch dir itself", code="bad-input")
    warnings.append(f"{path}: a saved analysis holds no per-wave values: the noise is the measured "
                    "capture-to-capture floor alone, so only the totals are tested; diff the "
                    "dispatch dirs for the wave-to-wave spread and a test of every row")
    topk = [a.asked_topk for a in chosen]
    if any(k not in (0, None) for k in topk):
        warnings.append(f"{path}: saved with --topk {topk[0]}: source lines and loads beyond the "
                        "top rows may be missing; save with --topk 0 for a complete diff")
    return _Side(info, chosen)


def _side_from_dirs(path: Path, kernel: str | None, max_waves: int | None,
                    warnings: list[str]) -> _Side:
    from hotspot.att.model import AnalyzeOptions
    from hotspot.plan.entry_point import analyze

    # the best dispatch and the next ones of its kernel: replicates measure the capture noise
    from hotspot.att import wave_samples

    # the analysis's own wave pass keeps the per-wave samples too: each wave file read once
    opts = AnalyzeOptions(topk=0, kernel=kernel, max_waves=max_waves, replicates=MAX_REPLICATES,
                          wave_samples=wave_samples.MAX_SAMPLE_WAVES)
    result = analyze(path, opts)
    warnings.extend(result.warnings)
    analyses = []
    samples = []
    data = result.data
    assert isinstance(data, MultiAnalysis)  # replicates: the best dispatch and its replicates
    for a in data.dispatches:
        analyses.append(a)
        if a.mode == AnalysisMode.CYCLES:  # a PC-sampling capture has no traced waves to resample
            samples.append(_samples_of(Path(a.dispatch.path), opts))
    if len(samples) != len(analyses):
        samples = []
    info = _info(path, "dispatch-dir", analyses)
    info = replace(info, samples=sum(len(s.samples.waves) for s in samples))  # 0: none
    return _Side(info, analyses, samples)


def _samples_of(d: Path, opts: AnalyzeOptions) -> "DispatchSamples":
    """Per-wave samples of one dispatch dir, kept in the result cache like its analysis."""
    import os

    from hotspot.att import wave_samples
    from hotspot.att.wave_samples import dispatch_samples
    from hotspot.cache.derived import cached

    max_bytes = int(opts.max_file_mb * 1024 * 1024) if opts.max_file_mb else None
    key = (str(d), os.path.abspath(d), opts.kernel, opts.max_waves, wave_samples.MAX_SAMPLE_WAVES)
    ignored: list[str] = []  # the capture's warnings were the analysis' to give
    return cached("wave-samples", key,
                  lambda _added: dispatch_samples(d, opts.kernel, opts.max_waves, max_bytes),
                  ignored, max_bytes)


def _kernel_of(a: DispatchAnalysis) -> str:
    return a.dispatch.kernel or ""


def _pick(analyses: list[DispatchAnalysis], kernel: str | None, path: Path) -> list[DispatchAnalysis]:
    if kernel:
        pat = user_regex(kernel, "--kernel")
        analyses = [a for a in analyses if pat.search(_kernel_of(a))]
        if not analyses:
            raise InputError(f"{path}: no analysis of a kernel matching --kernel {kernel!r}")
    best = max(analyses, key=lambda a: (a.dispatch.waves, a.dispatch.executed_instructions))
    return [a for a in analyses if _kernel_of(a) == _kernel_of(best)][:MAX_REPLICATES]


def _info(path: Path, kind: str, analyses: list[DispatchAnalysis]) -> SideInfo:
    return SideInfo(str(path), kind, _kernel_of(analyses[0]),
                    [a.dispatch.path for a in analyses], analyses[0].dispatch.waves,
                    _mean([float(a.totals.stall) for a in analyses]), 0)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _table(side: _Side) -> Table:
    """The side's values for the test: its traced waves' samples, else hotspot/diff/rows.py
    `totals_table`."""
    if side.samples:
        return pooled([s.samples for s in side.samples])
    return totals_table(side.analyses)


def _check_values(path: Path, a: DispatchAnalysis) -> None:
    """Refuse cycle counts no analysis writes (negative or infinite totals or rows, a null read
    back as NaN): diff would print them as a change. The types were checked when it was read."""
    # (field, where in it, value): the named field of every row diff reads
    values: list[tuple[str, str, float]] = [
        (f"totals.{name}", "", getattr(a.totals, name)) for name in TOTAL_FIELDS[:2] + TOTAL_FIELDS[3:]]
    values += [(f"instructions[].{fld}", f" of line {i.line_number}", getattr(i, fld))
               for i in a.instructions for fld in ("hit", "latency", "stall")]
    values += [("stall_by_category[].stall", "", c.stall) for c in a.stall_by_category]
    values += [("source_lines[].stall", "", r.stall) for r in a.source_lines]
    values += [("blamed_lines[].blamed_stall", "", b.blamed_stall) for b in a.blamed_lines or []]
    values += [("waits[].producers[].blamed_stall", "", p.blamed_stall) for w in a.waits or []
               for p in w.producers]
    for name, where, v in values:
        if not math.isfinite(v) or v < 0:
            raise InputError(f"{path}: field '{name}'{where} is {float(v)}: a cycle count is never "
                             "negative or infinite",
                             "pass an unedited hotspot analyze --format json output")


# ---------------------------------------------------------------------------------------------
# use case


def diff_paths(before: Path, after: Path, kernel: str | None = None, max_waves: int | None = None,
               seed: int = DEFAULT_SEED) -> Result[DiffResult]:
    from hotspot.result import Result

    if seed < 0 or seed >= 2 ** 63:
        raise UsageError("--seed is a whole number from 0 to 2**63 - 1")
    from hotspot.gcpause import paused_cyclic_gc

    warnings: list[str] = []
    b = load_side(before, kernel, max_waves, warnings)
    a = load_side(after, kernel, max_waves, warnings)
    # the test allocates ~10^5 short-lived lists and floats beside both sides' analyses: a cycle
    # collection would scan those analyses again and again (a quarter of the comparison's time)
    with paused_cyclic_gc():
        result = compare(b, a, warnings, seed)
    # one line per distinct warning: both sides (and their replicates) report the same conditions
    return Result("diff", result, list(dict.fromkeys(warnings)),
                  0 if result.comparable else EXIT_NOT_COMPARABLE)


def _first_loop(side: _Side) -> int | None:
    """The first code line of the side's first loop (None without loops)."""
    return min((lp.first_line_number for lp in side.analyses[0].loops or []), default=None)


def _code_listing(side: _Side) -> tuple[list[tuple[int, str, str]], str]:
    if side.samples:
        return side.samples[0].code, "code"
    ins = sorted(side.analyses[0].instructions, key=lambda i: i.line_number)
    return [(i.line_number, i.isa, i.source or "") for i in ins], "executed"


def compare(b: _Side, a: _Side, warnings: list[str], seed: int = DEFAULT_SEED,
            floor_sd: float = CAPTURE_NOISE_SD) -> DiffResult:
    from hotspot.diff.stats import SideSamples, bh_qvalues, bootstrap

    same_kernel = b.info.kernel == a.info.kernel
    if not same_kernel:
        warnings.append(f"kernels differ (before: {b.info.kernel[:80]}; after: {a.info.kernel[:80]}): "
                        "rows are matched by file:line only")
    (code_b, basis_b), (code_a, basis_a) = _code_listing(b), _code_listing(a)
    if basis_b != basis_a:  # a saved analysis holds executed instructions only: compare those
        code_b, code_a = (_executed(side, code) for side, code in ((b, code_b), (a, code_a)))
    code, line_map = compare_code(code_b, code_a, basis_b if basis_b == basis_a else "executed",
                                  (_first_loop(b), _first_loop(a)))
    tb, ta = _table(b), _table(a)  # what is resampled
    vtb, vta = totals_table(b.analyses), totals_table(a.analyses)  # what the rows show
    ga = groups(a.analyses[0])
    pairs: list[tuple[str | None, str | None, str]]  # (before key, after key, matched_by)
    if line_map is not None:  # same code: group both sides by the after side's locations
        inverse = {after_n: before_n for before_n, after_n in line_map.items()}
        gb = {k: Group(g.kind, g.label, [inverse[m] for m in g.members if m in inverse],
                        g.measure, g.signature,
                        None if g.per is None else [inverse[m] for m in g.per if m in inverse])
              for k, g in ga.items()}
        pairs = [(k, k, "key") for k in ga]
    else:
        gb = groups(b.analyses[0])
        pairs = match(gb, ga, same_kernel)

    # same code groups both sides by the after side's locations: nothing reads as gone then
    unmapped = _source_mapping(b, a, warnings) if line_map is None else ""
    if b.info.waves != a.info.waves:
        warnings.append(f"the sides traced different numbers of waves ({b.info.waves} vs "
                        f"{a.info.waves}): every row is cycles per traced wave, as always")
    # executed instructions per sample: read for the same code only (the scale below)
    same_work = (_work(tb), _work(ta)) if line_map is not None else None
    if same_work is not None and tb.per_wave and ta.per_wave and tb.n and ta.n:
        _warn_different_work(*same_work, warnings)
    work_change = None
    if same_work is None and same_kernel:
        work_change = _warn_matched_work(b, a, code_b, code_a, vtb, vta, floor_sd, warnings)
    replicate_sd, replicate_df = _replicate_sd([s for s in (b, a) if len(s.analyses) > 1])
    # the floor, updated by what the replicate dispatches measured (each a degree of freedom,
    # the floor weighing as those of its own estimate) when they show more, never less: the
    # dispatches of one collect run share its clock and contention, so they can look alike where
    # separate runs do not. For the same reason a side's factor is not divided by √k (its k
    # dispatches are not k independent captures). σ is then plugged in as known
    # (hotspot/diff/noise.py says how little 3 captures pin the floor down).
    pooled_sd = math.sqrt((FLOOR_DF * floor_sd ** 2 + replicate_df * (replicate_sd or 0.0) ** 2)
                          / (FLOOR_DF + replicate_df))
    sd_b = sd_a = max(float(floor_sd), pooled_sd)
    waves_b, waves_a = _mean_waves(b), _mean_waves(a)
    # Same code: the sides' traced waves may have run different amounts of work (other
    # workgroups: in a causal kernel, other trip counts), which no edit caused. Like is compared
    # with like by scaling each side to the same executed instructions per wave (the mean of
    # both): a row's per-wave cycles are Σ cycles / Σ executed instructions × that reference,
    # and the test's unit per wave is its executed instructions. Changed code is compared per
    # wave as it ran (an edit may change the work, and that is the change).
    work_b = work_a = None
    if same_work is not None:
        work_b, work_a = same_work
        if not (sum(work_b) and sum(work_a)):
            work_b = work_a = None
    scale_b = scale_a = 1.0
    if work_b is not None and work_a is not None:
        wb, wa = _work(vtb), _work(vta)
        per_b, per_a = sum(wb) / waves_b, sum(wa) / waves_a  # executed instructions per wave
        common = (per_b + per_a) / 2
        scale_b, scale_a = common / per_b, common / per_a

    memo: SumMemo = {}
    total_before = _value(vtb, series(vtb, gb[STALL_TOTAL]), waves_b)
    total_after = _value(vta, series(vta, ga[STALL_TOTAL]), waves_a)
    share_floor = MIN_SHARE_OF_TOTAL * max(total_before, total_after)
    fewest = min(_waves_traced(b, tb), _waves_traced(a, ta))
    few_waves = (f"{fewest} traced wave(s) on a side: too few to measure their spread (needs "
                 f"{MIN_WAVES})") if fewest < MIN_WAVES else ""
    if any(x.mode != "cycles" for x in b.analyses + a.analyses):
        few_waves = "a PC-sampling capture: sample counts, no traced waves to measure noise on"
    floor_only = not (tb.per_wave and ta.per_wave)
    # the resampled units: workgroups (a side whose traced waves form one workgroup shows no
    # spread between workgroups, the spread a recapture meets: its rows are not tested)
    wgs_b, wgs_a = _workgroups_of(tb, b), _workgroups_of(ta, a)
    cl_b, st_b = _units(tb, wgs_b)
    cl_a, st_a = _units(ta, wgs_a)
    for name, wgs, tab in (("before", wgs_b, tb), ("after", wgs_a, ta)):
        if not few_waves and wgs is not None and len(wgs) < MIN_WORKGROUPS:
            few_waves = (f"the {name} side's {tab.n} traced wave(s) form {len(wgs)} workgroup: they "
                         f"share its work, so they show no spread between workgroups to test "
                         f"against (needs {MIN_WORKGROUPS})")
    built = []
    # the test is about the change shown: when a side's rows show more waves than it resamples,
    # each row's replicates are moved onto its shown change (the `centres` argument of
    # hotspot/diff/stats.py `bootstrap`)
    subset = _resampled_subset(b) or _resampled_subset(a)
    centres: list[float | None] = []
    nums_b: list[list[float]] = []
    dens_b: list[list[int]] = []
    nums_a: list[list[float]] = []
    dens_a: list[list[int]] = []
    for kb, ka, how in pairs:
        g_b = gb[kb] if kb else None  # a pair names keys of its sides' groups, or None
        g_a = ga[ka] if ka else None
        ref = g_b or g_a
        assert ref is not None
        if ref.kind == RowKind.TOTAL and not same_kernel:
            continue  # different kernels: per-wave totals of different work say nothing
        shown_b = series(vtb, g_b, memo) if g_b else None
        shown_a = series(vta, g_a, memo) if g_a else None
        vb = _value(vtb, shown_b, waves_b) * scale_b if shown_b else 0.0
        va = _value(vta, shown_a, waves_a) * scale_a if shown_a else 0.0
        # executions per wave at the cycles' scale (same code: the same work per wave), so that
        # cycles / executions is the row's cost per execution as it ran
        eb = _value(vtb, (shown_b[1], []), waves_b) * scale_b if shown_b else None
        ea = _value(vta, (shown_a[1], []), waves_a) * scale_a if shown_a else None
        if g_b is not None and g_b.measure == "idle":
            vb = _mean([float(x.totals.idle) for x in b.analyses]) / waves_b * scale_b
            va = _mean([float(x.totals.idle) for x in a.analyses]) / waves_a * scale_a
        why = _untestable(ref, g_b, g_a, same_kernel, vb, va, share_floor) or few_waves
        if not why and unmapped and ref.kind in (RowKind.LINE, RowKind.LOAD):
            why = unmapped
        if not why and floor_only and ref.kind != RowKind.TOTAL:
            why = ("a saved analysis: the floor is measured on totals; a row's own run-to-run "
                   "spread needs per-wave values (diff the dispatch dirs)")
        # the per-wave samples of a row to test only; the test's unit per wave is the wave (or
        # its work), not the row's executions
        sb = series(tb, g_b, memo, executions=False) if g_b and not why else None
        sa = series(ta, g_a, memo, executions=False) if g_a and not why else None
        pair = None
        if not why and sb is not None and sa is not None:
            # every row is tested on cycles per wave: one unit per traced wave (same code: its
            # executed instructions, the like-with-like scale above)
            sb = (sb[0], work_b if work_b is not None else _waves_den(tb, waves_b))
            sa = (sa[0], work_a if work_a is not None else _waves_den(ta, waves_a))
            if any(x < 0 for x in sb[0] + sa[0]):
                why = "negative per-wave values (latency under stall)"
            elif not sum(sb[0]) or not sum(sa[0]):
                why = "not executed, or no cycles, on one side"
            else:
                pair = (sb, sa)
        label = (f"{g_b.label} -> {g_a.label}" if how in (MatchedBy.MNEMONICS, MatchedBy.STRUCTURE)  # type: ignore[union-attr]  # both sides matched
                 else ref.label)
        built.append((ref, label, how, vb, va, eb, ea, why, pair))
        if pair is not None:
            (nb, db), (na, da) = pair
            nums_b.append(nb)
            dens_b.append([round(x) for x in db])
            nums_a.append(na)
            dens_a.append([round(x) for x in da])
            centres.append(va / vb - 1 if subset and vb else None)

    own_sd = _own_floors(built, (nums_b, dens_b, cl_b), (nums_a, dens_a, cl_a))
    tests = bootstrap(SideSamples(nums_b, dens_b, sd_b, cl_b, st_b),
                      SideSamples(nums_a, dens_a, sd_a, cl_a, st_a),
                      REPLICATES, seed, LEVEL, own_sd, centres) if nums_b else []
    tested_p = [t.p for t in tests if t is not None]
    qs = iter(bh_qvalues(tested_p))
    test_iter = iter(tests)
    rows = []
    for ref, label, how, vb, va, eb, ea, why, pair in built:
        t = next(test_iter) if pair is not None else None
        if pair is not None and t is None:
            why = "no execution in the resampled waves"
        q = next(qs) if t is not None else None
        delta = va - vb
        delta_pct = 100 * delta / vb if vb else None
        # the printed change is the per-wave change of before -> after itself, so its sign is
        # theirs; the interval and p are the test's about that change (`centres` above)
        change = delta_pct if t is not None else None
        ci = [100 * t.ci[0], 100 * t.ci[1]] if t is not None else None
        rows.append(DiffRow(
            f"{ref.kind}:{label}", RowKind(ref.kind), label, vb, va, delta, delta_pct, "per wave",
            eb, ea, vb / eb if eb else None, va / ea if ea else None, change, ci,
            t.p if t else None, q, t is not None, "" if t is not None else why,
            t is not None and q is not None and q <= 1 - LEVEL, False, MatchedBy(how)))
    rows = _run_to_run(rows, code.same)
    # ranked on cycles per wave; the totals in a fixed order, the headline first
    rows.sort(key=lambda r: (KINDS.index(r.kind), TOTAL_ORDER.index(r.key) if r.key in TOTAL_ORDER
                             else 0, not r.significant, -abs(r.delta), -max(r.before, r.after),
                             r.key))
    method = ("floor-only" if floor_only else
              "waves+replicates" if replicate_sd is not None else "waves+floor")
    noise = NoiseInfo(method, _test_words(method), REPLICATES, seed, LEVEL, sd_b, sd_a, floor_sd,
                      replicate_sd, MIN_SHARE_OF_TOTAL,
                      _noise_note(method, sd_b, sd_a, floor_sd, replicate_sd) + _subset_note(b, a)
                      + _units_note(tb, cl_b, st_b, ta, cl_a, st_a),
                      _unit_counts(tb, cl_b, st_b), _unit_counts(ta, cl_a, st_a))
    summary = _summary(rows, code, same_kernel, method, work_change)
    return DiffResult(b.info, a.info, code, noise, summary, rows, "per-wave", "cycles per wave",
                      same_kernel)


def _work(t: Table) -> list[float]:
    """Executed instructions per sample (Σ over code lines of its executions)."""
    cols = list(t.hits.values())
    if not cols:
        return [0.0] * t.n
    return [float(x) for x in map(sum, zip(*cols))]


# (numerators [row][wave], units [row][wave], workgroups) of one side's tested rows
_SideRows = tuple[list[list[float]], list[list[int]], list[list[int]]]


def _own_floors(built: Sequence[tuple[Group, str, str, float, float, float | None, float | None,
                                      str, object]],
                side_b: _SideRows, side_a: _SideRows) -> list[float]:
    """Per tested row, the σ of a factor of its own: rows run at most once per wave (prologue and
    kernel-argument loads, the epilogue's stores) meet a cold or warm memory system as a capture
    goes, not as its waves differ, so their run-to-run variance is not the capture's (between two
    dispatches of one process they moved ×2.1 and ×0.64, issue 34). Learned from the data: the
    spread (sd of the log) of the row's per-wave value between the workgroups of each side, pooled
    over both: what one capture's cold state may move it by. Other rows: 0."""
    out: list[float] = []
    k = 0
    for ref, _label, _how, _vb, _va, eb, ea, _why, pair in built:
        if pair is None:
            continue
        cold = (ref.kind != RowKind.TOTAL and eb is not None and ea is not None
                and 0 < eb <= COLD_EXECUTIONS_PER_WAVE and 0 < ea <= COLD_EXECUTIONS_PER_WAVE)
        out.append(_between_workgroups_sd(k, side_b, side_a) if cold else 0.0)
        k += 1
    return out


def _between_workgroups_sd(row: int, *sides: _SideRows) -> float:
    """Pooled sd of log(row cycles per unit) between the workgroups of each side."""
    squares = 0.0
    df = 0
    for nums, dens, clusters in sides:
        groups = clusters or [[w] for w in range(len(nums[row]))]
        logs = []
        for members in groups:
            num = sum(nums[row][w] for w in members)
            den = sum(dens[row][w] for w in members)
            if num > 0 and den > 0:
                logs.append(math.log(num / den))
        if len(logs) > 1:
            m = sum(logs) / len(logs)
            squares += sum((v - m) ** 2 for v in logs)
            df += len(logs) - 1
    return math.sqrt(squares / df) if df else 0.0


def _source_mapping(b: _Side, a: _Side, warnings: list[str]) -> str:
    """When one side carries source locations and the other hardly any, its lines and loads all
    read as 0 there ("line 97: 53,803 -> 0"): say so, and why those rows are not tested."""
    from hotspot.att.findings import NO_SOURCE_MAPPED_SHARE

    mapped = [min(x.dispatch.source_mapped_pct for x in side.analyses) for side in (b, a)]
    floor = 100 * NO_SOURCE_MAPPED_SHARE
    if (mapped[0] < floor) == (mapped[1] < floor):
        return ""
    side = "before" if mapped[0] < floor else "after"
    warnings.append(f"the {side} side has source locations on {min(mapped):.0f}% of its executed "
                    f"instructions (the other {max(mapped):.0f}%): its source lines and loads read "
                    "as missing, so source-line and load rows are shown, not tested; compare "
                    "categories, loops and totals, or re-capture both with line tables")
    return f"source locations on one side only ({side}: {min(mapped):.0f}% mapped)"


def _workgroups_of(t: Table, side: _Side) -> list[list[int]] | None:
    """A side's workgroups (wave indexes), when its samples carry where each wave ran."""
    from hotspot.diff.workgroups import waves_per_workgroup, workgroups

    if not t.per_wave or t.placement is None or len(t.placement) != t.n:
        return None
    x = side.analyses[0]
    wg = x.occupancy.resources.wg if x.occupancy is not None and x.occupancy.resources is not None else None
    return workgroups(t.placement, waves_per_workgroup(wg, x.arch.gfx))


def _units(t: Table, groups: list[list[int]] | None) -> tuple[list[list[int]], list[list[int]]]:
    """The resampled workgroups and their strata (workgroup indexes by launch round); ([], []):
    each wave drawn on its own (no placement; or one workgroup, whose rows are not tested)."""
    from hotspot.diff.workgroups import strata

    if groups is None or t.placement is None or len(groups) < MIN_WORKGROUPS:
        return [], []
    return groups, strata(groups, t.placement)


def _unit_counts(t: Table, clusters: list[list[int]], layers: list[list[int]]) -> list[int]:
    """[traced waves resampled, workgroups, strata] of a side (0s for a saved analysis)."""
    if not t.per_wave:
        return [0, 0, 0]
    return [t.n, len(clusters) or t.n, len(layers) or 1]


def _units_note(tb: Table, cl_b: list[list[int]], st_b: list[list[int]], ta: Table,
                cl_a: list[list[int]], st_a: list[list[int]]) -> str:
    parts = []
    for name, t, cl, st in (("before", tb, cl_b, st_b), ("after", ta, cl_a, st_a)):
        if t.per_wave and cl:
            parts.append(f"{name}: {t.n} waves in {len(cl)} workgroup(s) (by SE, CU and start time), "
                         f"{len(st) or 1} launch round(s) drawn within themselves")
    return ("; workgroups resampled, not waves: " + "; ".join(parts)) if parts else ""


def _mean_waves(side: _Side) -> float:
    """Traced waves per analysis of a side (rows are Σ over its analyses / their count / this)."""
    return _mean([float(x.dispatch.waves) for x in side.analyses]) or 1.0


def _resampled_subset(side: _Side) -> bool:
    """The side's test resamples a spread subset of the traced waves its rows show (the largest
    captures: hotspot/att/wave_samples.py MAX_SAMPLE_WAVES)."""
    return bool(side.samples) and 0 < side.info.samples < sum(x.dispatch.waves for x in side.analyses)


def _run_to_run(rows: list[DiffRow], same_code: bool) -> list[DiffRow]:
    """Same code with unchanged issue cycles per wave: nothing the code does changed, so a row
    whose interval excludes 0 varies run to run (clock, contention, which workgroups were traced)
    and is not called a change."""
    if not same_code:
        return rows
    issue = next((r for r in rows if r.key == "total:issue"), None)
    if issue is None or issue.significant:
        return rows
    return [replace(r, significant=False, varies_run_to_run=True) if r.significant else r
            for r in rows]


def _warn_different_work(work_b: list[float], work_a: list[float], warnings: list[str]) -> None:
    """Same code, but the sides' traced waves ran disjoint amounts of work (executed instructions
    per wave): they are different CTAs (in a causal kernel, other positions of the mask), and a
    row whose cost per execution depends on the position can differ without any change."""
    work = [(min(w), max(w)) for w in (work_b, work_a)]
    (lo_b, hi_b), (lo_a, hi_a) = work
    if hi_b < lo_a or hi_a < lo_b:
        warnings.append(f"the sides traced waves of different work (executed instructions per wave: "
                        f"{lo_b:,.0f}-{hi_b:,.0f} before, {lo_a:,.0f}-{hi_a:,.0f} after): other CTAs "
                        "were traced; a row whose cost depends on the wave's position can move "
                        "without a change. Capture replicates, or trace the same CTAs")


def _warn_matched_work(b: _Side, a: _Side, code_b: list[tuple[int, str, str]],
                       code_a: list[tuple[int, str, str]], vtb: Table, vta: Table, floor_sd: float,
                       warnings: list[str]) -> float | None:
    """Changed code is compared per wave as it ran, but the instructions the edit left unchanged
    run as often per wave on both sides unless the edit changed control flow or other waves were
    traced: when their executions per wave differ by more than the floor, a per-wave change may be
    a change of work, not of speed. Returns that relative difference (None: within the floor)."""
    pairs = matched_lines(code_b, code_a)
    if not pairs:
        return None
    per_b = sum(vtb.hits.get(lb, [0.0])[0] for lb, _ in pairs) / _mean_waves(b)
    per_a = sum(vta.hits.get(la, [0.0])[0] for _, la in pairs) / _mean_waves(a)
    if per_b > 0 and per_a > 0 and abs(per_a / per_b - 1) > floor_sd:
        warnings.append(f"the {len(pairs):,} unchanged instructions ran {per_b:,.0f} times per wave "
                        f"before and {per_a:,.0f} after ({_signed_pct(100 * (per_a / per_b - 1))}): "
                        "the edit changed control flow or other waves were traced, so a per-wave "
                        "change may be one of work, not speed; compare per_execution_* or capture "
                        "the same CTAs")
        return per_a / per_b - 1
    return None


def _executed(side: _Side, code: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    executed = {i.line_number for i in side.analyses[0].instructions}
    return [r for r in code if r[0] in executed]


def _waves_traced(side: _Side, t: Table) -> int:
    """Waves behind a side's values: its samples, or the waves its saved analyses read."""
    return t.n if t.per_wave else sum(x.dispatch.waves for x in side.analyses)


def _waves_den(t: Table, waves: float) -> list[float]:
    """One per traced wave (a saved analysis: its wave count, as one sample)."""
    return [1.0] * t.n if t.per_wave else [float(waves or 1)]


def _value(t: Table, sums: tuple[list[float], list[float]], waves: float) -> float:
    """The row's cycles per traced wave on a side (Σ over samples / analyses / waves)."""
    return sum(sums[0]) / t.analyses / waves


def _untestable(ref: Group, g_b: Group | None, g_a: Group | None, same_kernel: bool,
                vb: float, va: float, share_floor: float) -> str:
    if not same_kernel:
        return "different kernels"
    if g_b is None or g_a is None:
        return "on one side only"
    if ref.measure == "idle":
        return "no per-wave value (idle is read from code.json only)"
    if ref.kind != "total" and max(abs(vb), abs(va)) < share_floor:
        return f"under {MIN_SHARE_OF_TOTAL:.1%} of the total stall on both sides"
    return ""


def _replicate_sd(sides: list[_Side]) -> tuple[float | None, int]:
    """σ (log scale) of total stall per executed instruction between a side's replicate
    dispatches (sample sd of the log rates), pooled over the sides that hold them; and its
    degrees of freedom."""
    squares = 0.0
    df = 0
    for side in sides:
        logs = []
        for x in side.analyses:
            hits = float(x.totals.hit)
            stall = float(x.totals.stall)
            if hits > 0 and stall > 0:
                logs.append(math.log(stall / hits))
        if len(logs) > 1:
            m = sum(logs) / len(logs)
            squares += sum((v - m) ** 2 for v in logs)
            df += len(logs) - 1
    return (math.sqrt(squares / df), df) if df else (None, 0)


def _subset_note(*sides: _Side) -> str:
    """Say so when the test resampled a spread subset of a side's traced waves."""
    parts = []
    for name, side in zip(("before", "after"), sides):
        read = sum(x.dispatch.waves for x in side.analyses)
        if _resampled_subset(side):
            parts.append(f"{name}: {side.info.samples} of {read} traced waves resampled "
                         "(spread over SE/SIMD groups; the rows show all, and each row's interval "
                         "and p are moved onto its shown change)")
    return "; " + "; ".join(parts) if parts else ""




def _test_words(method: str) -> str:
    base = (f"bootstrap of cycles per wave (same code: per executed instruction, both sides "
            f"scaled to the same work per wave) ({REPLICATES} replicates, percentile "
            f"{LEVEL:.0%} interval, the two-sided p that inverts it), "
            "Benjamini-Hochberg q over the tested rows")
    if method == "floor-only":
        return base + ("; a saved analysis holds no per-wave values: the capture factor alone, "
                       "totals only")
    return ("traced workgroups (their waves together) resampled with replacement within their "
            "launch round, times a capture factor; " + base)


def _noise_note(method: str, sd_b: float, sd_a: float, floor_sd: float,
                replicate_sd: float | None) -> str:
    parts = [f"capture-to-capture floor ±{floor_sd:.2%} (1 sd, estimated from {FLOOR_DF + 1} "
             "replicate captures of one kernel and treated as known; a kernel that varies more "
             "run to run: capture replicate dispatches, whose spread then raises it)"]
    if replicate_sd is not None:
        parts.append(f"replicate dispatches measured ±{replicate_sd:.2%} (pooled with the floor "
                     f"when larger; capture factor ±{sd_b:.2%} before, ±{sd_a:.2%} after)")
    if method == "floor-only":
        parts.append("a saved analysis has no per-wave values: totals only are tested; diff "
                     "dispatch dirs for the wave-to-wave spread and every row")
    else:
        parts.append("wave-to-wave spread from the traced waves")
    return "; ".join(parts)


def _fmt_ci(ci: list[float] | None) -> str:
    from hotspot.render.diff import interval

    return interval(ci)


def _summary(rows: list[DiffRow], code: CodeComparison, same_kernel: bool,
             method: str, work_change: float | None = None) -> DiffSummary:
    sig = [r for r in rows if r.significant]
    run_to_run = [r for r in rows if r.varies_run_to_run]
    head = next((r for r in rows if r.key == HEADLINE), None)
    stall = next((r for r in rows if r.key == STALL_TOTAL), None)
    noise_pct = None
    if head is not None and head.ci_pct and head.change_pct is not None:
        # the noise on this kernel: how far the interval reaches from the observed change
        noise_pct = max(head.change_pct - head.ci_pct[0], head.ci_pct[1] - head.change_pct)
    lead = "" if code.same else f"{code.summary}; "
    advice = ""
    if not same_kernel or head is None:
        verdict = ("different kernels: not comparable, no totals and no change called "
                   "significant (diff two captures of one kernel)")
    elif head.significant and head.change_pct is not None:
        verdict = (f"{lead}time per wave (latency) {'down' if head.change_pct < 0 else 'up'} "
                   f"{_signed_pct(head.change_pct)} {_fmt_ci(head.ci_pct)}: beyond "
                   f"capture-to-capture noise" + _stall_part(stall) + f"; {len(sig)} row(s) moved")
        if work_change is not None:
            verdict += (f"; but the unchanged instructions ran {_signed_pct(100 * work_change)} "
                        "as often per wave (other waves traced, or control flow changed): a "
                        "change of work, not necessarily of speed")
    elif run_to_run:
        moved = (f"time per wave {_signed_pct(head.change_pct)} {_fmt_ci(head.ci_pct)} and "
                 if head.varies_run_to_run and head.change_pct is not None else "")
        verdict = (f"no code change; these rows vary run to run: {moved}{len(run_to_run)} row(s) "
                   "beyond capture-to-capture noise with the same instructions and unchanged issue "
                   "cycles (clock, contention, which workgroups were traced), not an edit")
    elif sig:
        verdict = (f"{lead}time per wave within capture-to-capture noise"
                   + (f" (±{noise_pct:.0f}% on this kernel)" if noise_pct is not None else "")
                   + _q_part(head) + f"; {len(sig)} row(s) moved beyond it")
    elif noise_pct is not None:
        verdict = (f"{lead}no change in time per wave beyond capture-to-capture noise "
                   f"(±{noise_pct:.0f}% on this kernel)" + _q_part(head))
    else:
        verdict = f"{lead}not decided: {head.not_tested or 'no row could be tested'}"
    if same_kernel and head is not None and not head.significant:
        if noise_pct is None:
            advice = ("capture more traced waves, or replicate dispatches (hotspot collect "
                      "--iterations with two or more), of both versions and diff again")
        elif noise_pct > 100 * WIDE_INTERVAL:
            advice = (f"the interval is too wide to decide a change under ±{noise_pct:.0f}%: " +
                      ("capture replicate dispatches (hotspot collect --iterations with two or "
                       "more) of both versions and diff again" if method != "floor-only" else
                       "diff the dispatch dirs (per-wave values) rather than saved analyses"))
    return DiffSummary(
        len(rows), sum(1 for r in rows if r.tested), len(sig),
        sum(1 for r in sig if r.delta < 0), sum(1 for r in sig if r.delta > 0), len(run_to_run),
        head.before if head else None, head.after if head else None,
        head.change_pct if head else None, head.ci_pct if head else None,
        bool(head and head.significant),
        stall.before if stall else None, stall.after if stall else None,
        stall.change_pct if stall else None, stall.ci_pct if stall else None,
        bool(stall and stall.significant), noise_pct, verdict, advice)


def _q_part(head: DiffRow) -> str:
    """The headline's interval excludes 0 but its q-value does not call it (the correction over
    every tested row): said, so the verdict does not read against the interval printed below."""
    if head.p is None or head.p >= 1 - LEVEL or head.ci_pct is None or head.change_pct is None:
        return ""
    from hotspot.render.diff import q_text

    q = q_text(head.q, 1 - LEVEL) if head.q is not None else "n/a"
    return (f"; its interval {_signed_pct(head.change_pct)} {_fmt_ci(head.ci_pct)} excludes 0, "
            f"but not after the false-discovery correction over the tested rows (q {q})")


def _signed_pct(value: float) -> str:
    from hotspot.render.diff import change_pct

    return change_pct(value)


def _stall_part(stall: DiffRow | None) -> str:
    """The stall's share of the change: its per-wave cycles moved by this much of the latency's."""
    if stall is None or stall.change_pct is None:
        return ""
    return f" (stall per wave {_signed_pct(stall.change_pct)}, {num_cycles(stall.delta)} cycles)"


def num_cycles(value: float) -> str:
    return f"{value:+,.0f}".replace("-", "\u2212")
