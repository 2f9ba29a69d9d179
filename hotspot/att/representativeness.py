"""Does the capture represent the kernel? One model, read by the plan's trust (hotspot/plan/engine.py
`trust_of`, written as `plan_trust`).

A capture can be well-formed and still describe something other than the kernel's steady work:
- most traced waves retired early (workgroups with no work: a handful of records, then s_endpgm);
- the kernel is the HIP runtime's (a rocclr copy/fill/blit kernel), not user code;
- the wave streams miss their start (the kernel's entry row never executed on any traced wave
  while later rows did: the trace began after the waves started);
- too few waves or workgroups were traced to rank anything;
- the traced waves executed a sliver of the code (`idle-slice`);
- code.json's sums disagree with the wave files' (`wave-mismatch`).
Each reason carries its level (`unrepresentative`, `limited`, or `note`: said, but no effect on
trust) and what to re-capture and how. Source lines collapsing onto one line limits line-level
claims only: a note, never a trust level.

When early-exit waves are a material share, the shares the analysis reports (totals, stall by
category, instructions, source lines, and each wait's stall in `waits`) are computed over the
working waves: their per-line sums are code.json's minus those of the early-exit waves (kept apart
by the wave pass, hotspot/capture/waves.py). Pure: no file is read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Union

from hotspot.arch.targets import KERNARG_PRELOAD_ENTRY_OFFSET
from hotspot.att.findings import (
    Finding,
    IdleSliceEvidence,
    SourceCollapseEvidence,
    WaveMismatchEvidence,
    finding_of,
)
from hotspot.att.loops import Loop
from hotspot.att.waits.reduce import WaitBlame
from hotspot.capture import SHORT_WAVE_MAX_RECORDS, CodeRow, WaveTotals, is_runtime_kernel
from hotspot.record import record

OK = "ok"
LIMITED = "limited"
UNREPRESENTATIVE = "unrepresentative"
NOTE = "note"
_RANK = {NOTE: 0, LIMITED: 1, UNREPRESENTATIVE: 2}

# Early-exit wave: executed at most EARLY_EXIT_MAX_RECORDS instruction records (the wave pass keeps
# the per-line sums of such waves apart, so the bound is the wave pass's) AND fewer than
# EARLY_EXIT_MAX_SHARE of the longest traced wave's records. Both: a short kernel's waves are all
# short, and a causal-attention wave doing a tenth of the longest one's blocks is still working.
EARLY_EXIT_MAX_RECORDS = SHORT_WAVE_MAX_RECORDS
EARLY_EXIT_MAX_SHARE = 0.1
# From this share of the traced waves on, early-exit waves are taken out of the shares.
EARLY_EXIT_MATERIAL_SHARE = 0.25
# Sample size below which a capture cannot rank items: working waves, and workgroups (estimated as
# working waves / waves per workgroup). 4 waves of one workgroup are one sample, not a kernel.
MIN_WORKING_WAVES = 16
MIN_WORKGROUPS = 2
# ... unless those waves (of >= MIN_WORKGROUPS workgroups) each repeat a loop holding >=
# STEADY_LOOP_MIN_SHARE of the stall at least this often and their record counts agree within 10%:
# then the sample is the steady state many times over (a note).
SMALL_SAMPLE_MIN_PASSES = 8.0
UNIFORM_WAVES_MIN_RATIO = 0.9
# Passes per wave through the hottest loop below this: no steady state was traced.
MIN_PASSES_PER_WAVE = 2.0
# A loop holding at least this share of the stall is where the kernel's time goes: one of them
# repeating shows the steady state (an outer loop run once around a repeated inner one is fine).
STEADY_LOOP_MIN_SHARE = 0.25
# code.json vs wave files: beyond this factor between the two sums (either way), the numbers are
# not the traced waves' (another decode, a hostile file): unrepresentative; below it, limited.
WAVE_MISMATCH_UNREPRESENTATIVE_RATIO = 2.0

ALL_WAVES = "all-waves"
WORKING_WAVES = "working-waves"

RECAPTURE_CU = ("re-capture with another att_target_cu or att_shader_engine_mask (a CU whose waves do "
                "the kernel's work), or a larger grid")
RECAPTURE_SAMPLE = ("re-capture tracing more of the GPU: a wider att_shader_engine_mask, another "
                    "att_target_cu, a larger grid, or several dispatches (kernel_iteration_range)")
RECAPTURE_START = ("re-capture so the trace starts with the dispatch: one dispatch per trace "
                   "(kernel_iteration_range), a larger ATT buffer, and nothing running on the traced "
                   "CU before it")
RECAPTURE_USER_KERNEL = ("this is the HIP runtime's kernel (copy/fill/blit), not user code: "
                         "re-capture your kernel (rocprofv3 --kernel-include-regex, or pick its "
                         "dispatch with --kernel)")


# The evidence of each reason, one record per kind (idle-slice reuses its finding's), its fields in
# the order the JSON writes them. No two share their set of field names (how a saved document's
# evidence is read back: hotspot/decode.py, unions of records).


@record
class RuntimeKernelEvidence:
    kernel: str


@record
class WaveMismatchReasonEvidence(WaveMismatchEvidence):
    """The wave-mismatch finding's evidence, and how far apart the two sums are."""

    ratio: float
    threshold_ratio: float


@record
class EarlyExitEvidence:
    early_exit_waves: int
    waves: int
    share: float
    early_exit_records: list[int]
    longest_wave_records: int
    threshold_records: int
    threshold_share_of_longest: float
    material_share: float


@record
class PreloadEntryEvidence:
    entry_line_number: int
    first_executed_line_number: int
    offset_bytes: int


@record
class MissingStartEvidence:
    entry_line_number: int
    first_executed_line_number: int
    executed_rows: int
    code_rows: int


@record
class SteadySampleEvidence:
    """small-sample as a note: few waves, each repeating the hot loop."""

    working_waves: int
    workgroups_estimated: int
    passes_per_wave: float
    threshold_passes: float


@record
class SmallSampleEvidence:
    working_waves: int
    workgroups_estimated: int | None
    waves_per_workgroup: int | None
    threshold_waves: int
    threshold_workgroups: int


@record
class SinglePassEvidence:
    passes_per_wave: float
    threshold: float


@record
class LineShareEvidence:
    """source-collapse: the collapsed line's share of the stall."""

    share: float


ReasonEvidence = Union[RuntimeKernelEvidence, IdleSliceEvidence, WaveMismatchReasonEvidence,
                       EarlyExitEvidence, PreloadEntryEvidence, MissingStartEvidence,
                       SteadySampleEvidence, SmallSampleEvidence, SinglePassEvidence, LineShareEvidence]


@record
class Reason:
    id: str       # early-exit-waves | runtime-kernel | missing-start | preload-entry | small-sample | single-pass |
    #               idle-slice | wave-mismatch | source-collapse
    level: str    # unrepresentative | limited | note
    message: str
    recapture: str  # what to re-capture and how ("" for notes that need no re-capture)
    evidence: ReasonEvidence


@record
class Representativeness:
    level: str                   # ok | limited | unrepresentative: the worst reason (notes aside)
    waves_traced: int            # wave files read
    waves_working: int
    waves_early_exit: int
    early_exit_share: float      # of the waves read
    early_exit_max_records: int | None  # records at or below which a wave counted as early exit
    longest_wave_records: int
    waves_per_workgroup: int | None
    workgroups_estimated: int | None  # working waves / waves per workgroup (rounded up)
    passes_per_wave: float | None     # iterations per wave of the loop with the most stall
    shares_over: str             # all-waves | working-waves: which waves totals and shares cover
    reasons: list[Reason]


def early_exit_lengths(lengths: dict[int, int]) -> set[int]:
    """Record counts of early-exit waves among the traced waves' counts."""
    if not lengths:
        return set()
    longest = max(lengths)
    return {n for n in lengths
            if n <= EARLY_EXIT_MAX_RECORDS and n < EARLY_EXIT_MAX_SHARE * longest}


def working_rows(rows: Sequence[CodeRow], waves: WaveTotals, early: set[int]) -> list[CodeRow] | None:
    """code rows with the early-exit waves' hit/latency/stall taken out; None when a row would go
    negative (code.json and the wave files disagree: no subtraction is sound then)."""
    out_sub: dict[int, list[int]] = {}
    for n in early:
        for line, (h, lat, st) in waves.short_lines.get(n, {}).items():
            acc = out_sub.setdefault(line, [0, 0, 0])
            acc[0] += h
            acc[1] += lat
            acc[2] += st
    out = []
    for r in rows:
        sub = out_sub.get(r.line_number)
        if sub is None:
            out.append(r)
            continue
        hit, lat, st = r.hit - sub[0], r.latency - sub[1], r.stall - sub[2]
        if hit < 0 or lat < 0 or st < 0:
            return None
        out.append(replace(r, hit=hit, latency=lat, stall=st))
    return out


def working_waits(waits: Sequence[WaitBlame], rows: Sequence[CodeRow], working: Sequence[CodeRow],
                  total_stall: int) -> list[WaitBlame]:
    """The wait blame with each wait's stall taken down to the working waves' (its code row's stall
    after the early-exit waves are left out), its producers' blame scaled alike: early-exit waves
    run only the prologue, whose waits wait on the same producers in every wave."""
    before = {r.line_number: r for r in rows}
    after = {r.line_number: r for r in working}
    out = []
    for w in waits:
        old, new = before.get(w.line_number), after.get(w.line_number)
        if old is None or new is None or (old.stall, old.hit) == (new.stall, new.hit):
            out.append(replace(w, share=w.stall / total_stall if total_stall else 0.0))
            continue
        f = new.stall / old.stall if old.stall else 0.0
        producers = [replace(p, blamed_stall=p.blamed_stall * f) for p in w.producers]
        out.append(replace(w, stall=new.stall, hits=new.hit, producers=producers,
                           share=new.stall / total_stall if total_stall else 0.0))
    out.sort(key=lambda w: (-w.stall, w.line_number))
    return out


def _mismatch_ratio(ev: WaveMismatchEvidence) -> float:
    worst = 1.0
    for v in ev.totals.values():
        a, b = abs(v.code_json), abs(v.wave_files)
        lo, hi = min(a, b), max(a, b)
        worst = max(worst, hi / lo if lo else float("inf") if hi else 1.0)
    return worst


def assess(rows: Sequence[CodeRow], waves: WaveTotals, kernel_names: Sequence[str],
           findings: Sequence[Finding], loops: Sequence[Loop], wg_threads: int | None,
           wave_size: int | None) -> tuple[Representativeness, list[CodeRow] | None]:
    """The model, and the code rows of the working waves when the shares must be taken over them
    (None: the shares stay over all waves)."""
    reasons: list[Reason] = []
    runtime = next((n for n in kernel_names if n and is_runtime_kernel(n)), None)
    if runtime is not None:
        reasons.append(Reason("runtime-kernel", UNREPRESENTATIVE,
                              f"{runtime[:80]} is a HIP runtime kernel (copy/fill/blit): its "
                              "instructions are the runtime's plumbing, not code you can change",
                              RECAPTURE_USER_KERNEL, RuntimeKernelEvidence(runtime)))
    idle = finding_of(findings, IdleSliceEvidence)
    if idle is not None:
        f, idle_ev = idle
        reasons.append(Reason("idle-slice", UNREPRESENTATIVE, f.message, f.hint, idle_ev))
    mismatch = finding_of(findings, WaveMismatchEvidence)
    if mismatch is not None:
        f, m = mismatch
        ratio = _mismatch_ratio(m)
        gross = ratio > WAVE_MISMATCH_UNREPRESENTATIVE_RATIO
        reasons.append(Reason("wave-mismatch", UNREPRESENTATIVE if gross else LIMITED,
                              f.message + (f" (off by {ratio:,.1f}x)" if gross else ""), f.hint,
                              WaveMismatchReasonEvidence(m.totals, m.rows_differing, m.first_rows,
                                                         m.waves_read, ratio,
                                                         WAVE_MISMATCH_UNREPRESENTATIVE_RATIO)))

    # early-exit waves
    traced = waves.waves
    early = early_exit_lengths(waves.lengths)
    n_early = sum(waves.lengths[n] for n in early)
    working = traced - n_early
    longest = max(waves.lengths, default=0)
    share = n_early / traced if traced else 0.0
    adjusted: list[CodeRow] | None = None
    if n_early and working:
        cut = max(early)
        ev = EarlyExitEvidence(n_early, traced, round(share, 4), sorted(early), longest,
                               EARLY_EXIT_MAX_RECORDS, EARLY_EXIT_MAX_SHARE, EARLY_EXIT_MATERIAL_SHARE)
        what = (f"{n_early} of {traced} traced waves ({share:.0%}) executed at most {cut} instruction "
                f"records (the longest executed {longest:,}) and retired: workgroups with no work")
        if share >= EARLY_EXIT_MATERIAL_SHARE:
            adjusted = working_rows(rows, waves, early) if mismatch is None else None
            if adjusted is not None:
                reasons.append(Reason("early-exit-waves", NOTE,
                                      what + f"; totals and shares are over the {working} working waves",
                                      RECAPTURE_CU, ev))
            else:
                reasons.append(Reason("early-exit-waves", LIMITED,
                                      what + "; code.json and the wave files disagree, so the shares "
                                      "could not be taken over the working waves and include them",
                                      RECAPTURE_CU, ev))
        else:
            reasons.append(Reason("early-exit-waves", NOTE, what + " (below the material share: "
                                  "shares are over all waves)", RECAPTURE_CU, ev))

    # missing start: the entry row never ran while later rows did
    first_run = next((r for r in rows if r.hit > 0), None)
    preload_entry = (first_run is not None and rows[0].vaddr > 0
                     and first_run.vaddr - rows[0].vaddr == KERNARG_PRELOAD_ENTRY_OFFSET)
    if rows and rows[0].hit == 0 and first_run is not None and preload_entry:
        reasons.append(Reason(
            "preload-entry", NOTE,
            f"the waves started at #{first_run.line_number}, {KERNARG_PRELOAD_ENTRY_OFFSET} bytes after "
            f"the entry: the rows before it are the kernel-argument preload prologue, which firmware "
            "that preloads arguments skips (not a trace that began late)",
            "", PreloadEntryEvidence(rows[0].line_number, first_run.line_number,
                                     KERNARG_PRELOAD_ENTRY_OFFSET)))
    elif rows and rows[0].hit == 0 and first_run is not None:
        executed = sum(1 for r in rows if r.hit > 0)
        reasons.append(Reason(
            "missing-start", LIMITED,
            f"the kernel's entry row (#{rows[0].line_number} `{rows[0].isa[:50]}`) never executed on "
            f"any traced wave while {executed} of {len(rows)} rows did (the first from "
            f"#{first_run.line_number}): the trace began after the waves started, so the prologue "
            "and whatever ran before the trace are missing",
            RECAPTURE_START,
            MissingStartEvidence(rows[0].line_number, first_run.line_number, executed, len(rows))))

    # sample size
    per_wg = -(-wg_threads // wave_size) if wg_threads and wave_size else None
    workgroups = -(-working // per_wg) if per_wg else None
    small = []
    if working < MIN_WORKING_WAVES:
        small.append(f"{working} working wave(s) (< {MIN_WORKING_WAVES})")
    if workgroups is not None and workgroups < MIN_WORKGROUPS:
        small.append(f"about {workgroups} workgroup(s) of {per_wg} waves (< {MIN_WORKGROUPS})")
    # A few waves that each repeat the hot loop many times, all alike, are the steady state many
    # times over (the kernel's workgroups do the same thing): a note, not a limit.
    steady = [lp for lp in loops if lp.share >= STEADY_LOOP_MIN_SHARE]
    repeats = max((lp.iterations_per_wave for lp in steady), default=0.0)
    working_lengths = [n for n in waves.lengths if n not in early_exit_lengths(waves.lengths)]
    alike = bool(working_lengths) and min(working_lengths) >= UNIFORM_WAVES_MIN_RATIO * max(working_lengths)
    if small and traced and workgroups is not None and workgroups >= MIN_WORKGROUPS \
            and repeats >= SMALL_SAMPLE_MIN_PASSES and alike:
        reasons.append(Reason("small-sample", NOTE,
                              "the capture traced " + " and ".join(small) + f", but each repeats the hot "
                              f"loop {repeats:.0f} times and their lengths agree within "
                              f"{1 - UNIFORM_WAVES_MIN_RATIO:.0%}: the steady state, many times over",
                              RECAPTURE_SAMPLE,
                              SteadySampleEvidence(working, workgroups, repeats, SMALL_SAMPLE_MIN_PASSES)))
    elif small and traced:
        reasons.append(Reason("small-sample", LIMITED,
                              "the capture traced " + " and ".join(small) + ": too few to tell the "
                              "kernel's behaviour from one wave's or one workgroup's",
                              RECAPTURE_SAMPLE,
                              SmallSampleEvidence(working, workgroups, per_wg, MIN_WORKING_WAVES,
                                                  MIN_WORKGROUPS)))
    # An outer loop run once per wave holds its inner loops' stall too: the steady state is seen
    # when any loop holding a material share of the stall repeats, so the loop judged is the most
    # repeated of those (else the hottest loop).
    material = [lp for lp in loops if lp.share >= STEADY_LOOP_MIN_SHARE]
    hottest = (max(material, key=lambda lp: (lp.iterations_per_wave, lp.stall, -lp.first_line_number))
               if material else max(loops, key=lambda lp: (lp.stall, -lp.first_line_number), default=None))
    passes = hottest.iterations_per_wave if hottest is not None else None
    if hottest is not None and passes is not None and passes < MIN_PASSES_PER_WAVE:
        reasons.append(Reason("single-pass", LIMITED,
                              f"the hottest loop (#{hottest.first_line_number}-#{hottest.last_line_number}) "
                              f"ran {passes:.1f} time(s) per wave: no steady state was traced",
                              RECAPTURE_SAMPLE, SinglePassEvidence(passes, MIN_PASSES_PER_WAVE)))

    collapse = finding_of(findings, SourceCollapseEvidence)
    if collapse is not None:
        f, c = collapse
        reasons.append(Reason("source-collapse", NOTE,
                              "line-level locations are unreliable (instruction-level blame is not "
                              "affected): " + f.message, f.hint, LineShareEvidence(c.share)))

    level = max((r.level for r in reasons), key=_RANK.__getitem__, default=NOTE)
    model = Representativeness(
        OK if level == NOTE else level, traced, working, n_early, round(share, 4),
        max(early) if early else None, longest, per_wg, workgroups, passes,
        WORKING_WAVES if adjusted is not None else ALL_WAVES, reasons)
    return model, adjusted
