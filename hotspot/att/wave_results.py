"""Everything derived from the wave files of one dispatch: one wave pass, then the reductions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field, replace

from hotspot.arch.waitcnt import GFX9, WaitcntRules
from hotspot.att import findings as fnd
from hotspot.att.barriers import BarrierStat, barrier_stats
from hotspot.arch.classify import MEMORY_CATEGORIES, Category, classify
from hotspot.att.engine.samples import WaveSample
from hotspot.att.engine.wavepass import (
    PassOptions,
    WavePartial,
    run_wave_pass,
    sample_wave_files,
)
from hotspot.att.issue_share import IssueWeights, TraceCeilings, trace_ceilings
from hotspot.att.loops import Loop, loops_taken
from hotspot.att.states import WaveStates, wave_states
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.att.waits.reduce import (
    Attribution,
    BlamedLine,
    LgkmBreakdown,
    WaitBlame,
    attribution,
    blamed_lines,
    lgkm_breakdown,
    wait_blames,
)
from hotspot.capture import CodeRow, WaveFile, WaveTotals
from hotspot.record import record

# Producers named in an lgkm finding's evidence.
FINDING_PRODUCERS = 3


@record
class WaveResults:
    totals: WaveTotals  # sums over the waves read (cross-check of code.json)
    sampled: bool
    wave_states: WaveStates
    waits: list[WaitBlame]
    blamed_lines: list[BlamedLine]
    lgkm_breakdown: LgkmBreakdown | None
    loops: list[Loop]
    barriers: list[BarrierStat]
    attribution: Attribution
    findings: list[fnd.Finding]
    ceilings: TraceCeilings | None = None  # MFMA/VALU issue share per SIMD (hotspot/att/issue_share.py)
    # the own values of the waves asked for (diff's samples), by wave file; {} when none were
    samples: dict[str, WaveSample] = field(default_factory=dict)


def analyze_waves(files: Sequence[WaveFile], all_rows: Sequence[CodeRow],
                  kernel_rows: Sequence[CodeRow], max_waves: int | None,
                  max_bytes: int | None, warnings: list[str], jobs: int | None = None,
                  meanwhile: Callable[[], None] | None = None,
                  rules: WaitcntRules | None = GFX9, gfx: str | None = None,
                  sample: Sequence[WaveFile] = ()) -> WaveResults:
    """The wave-derived results; `meanwhile` runs while the wave files are read (run_wave_pass);
    `sample`: waves (among those read) whose own per-line values are kept too."""
    chosen = sample_wave_files(files, max_waves)
    sampled = len(chosen) < len(files)
    if sampled:
        groups = len({(w.se, w.simd) for w in chosen})
        warnings.append(f"--max-waves {max_waves}: read {len(chosen)} of {len(files)} wave files, "
                        f"spread evenly over {groups} SE/SIMD groups; wave-derived results (waits, "
                        "wave states, loops, barriers) cover those waves only")
    weights = IssueWeights(kernel_rows, gfx)
    opts = PassOptions(build_tables(all_rows, rules), max_bytes, issue=weights,
                       sample=frozenset(w.where for w in sample))
    part = run_wave_pass(chosen, opts, jobs, meanwhile)
    _warn_unknown_lines(part, all_rows, files, warnings)
    out = reduce_partial(part, all_rows, kernel_rows, len(files), sampled)
    loops = [(lp.first_line_number, lp.last_line_number) for lp in out.loops]
    return replace(out, ceilings=trace_ceilings(part.issue, weights, loops), samples=part.samples)


def _warn_unknown_lines(part: WavePartial, all_rows: Sequence[CodeRow], files: Sequence[WaveFile],
                        warnings: list[str]) -> None:
    """Wave records naming a line code.json does not declare match no code row: say so (with
    how many), since every per-line result leaves them out."""
    known = {r.line_number for r in all_rows}
    unknown = sorted(line for line in part.totals.per_line if line not in known)
    if not unknown:
        return
    records = sum(part.totals.per_line[line][0] for line in unknown)
    where = files[0].path.parent / "code.json" if files else "code.json"
    shown = ", ".join(str(line) for line in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    warnings.append(f"{records} wave instruction record(s) name {len(unknown)} line id(s) absent "
                    f"from {where} ({shown}); they match no code row and are left out of per-line "
                    "results (wave files and code.json from different decodes?)")


def reduce_partial(part: WavePartial, all_rows: Sequence[CodeRow], kernel_rows: Sequence[CodeRow],
                   waves_total: int, sampled: bool) -> WaveResults:
    by_line = {r.line_number: r for r in all_rows}
    read_stall = sum(v[2] for v in part.totals.per_line.values())
    waits = wait_blames(part.blame, by_line, read_stall)
    bd = lgkm_breakdown(part.blame, by_line)
    states = wave_states(part.totals.states, part.totals.waves, waves_total, part.totals.cycles,
                         part.line_states, by_line)
    loops = loops_taken(part.backedges, kernel_rows, part.totals.per_line, waits, read_stall)
    barriers = barrier_stats(part.barriers, by_line)
    attr = attribution(part.blame, part.totals.waves, waves_total)
    findings = [f for f in (
        fnd.lgkm_cross_lane(bd, read_stall, _top_producers(waits, {Category.CROSS_LANE})),
        fnd.lgkm_smem(bd, read_stall, _smem_in_prologue(waits, kernel_rows),
                      _top_producers(waits, {Category.SMEM})),
    ) if f is not None]
    return WaveResults(part.totals, sampled, states, waits, blamed_lines(part.blame, by_line), bd,
                       loops, barriers, attr, findings)


def _top_producers(waits: Sequence[WaitBlame], categories: set[str]) -> list[str]:
    acc: dict[str, float] = {}
    for w in waits:
        for p in w.producers:
            if p.category in categories and p.line_number is not None:
                key = f"#{p.line_number} {p.isa}" + (f" ({p.source})" if p.source else "")
                acc[key] = acc.get(key, 0.0) + p.blamed_stall
    return [k for k, _ in sorted(acc.items(), key=lambda kv: (-kv[1], kv[0]))][:FINDING_PRODUCERS]


def _smem_in_prologue(waits: Sequence[WaitBlame], kernel_rows: Sequence[CodeRow]) -> bool:
    """True when every blamed scalar load comes before the kernel's first executed non-scalar
    memory instruction (the kernel-argument loads at entry)."""
    first_vector = min((r.line_number for r in kernel_rows if r.hit > 0
                        and classify(r.isa).category in MEMORY_CATEGORIES
                        and classify(r.isa).category is not Category.SMEM), default=None)
    smem = [p.line_number for w in waits for p in w.producers
            if p.category == Category.SMEM and p.line_number is not None and p.blamed_stall > 0]
    if not smem:
        return False
    return first_vector is None or max(smem) < first_vector
