"""`matrix-core-bound` (issue 33, point 2): a loop whose SIMDs keep the matrix core >= 85% busy gets
the verdict (LOW, first) instead of latency items, read from the waves alone (no launch row): the
planted waves go through the wave pass's issue accumulator, the loop found from the branch offset."""

from __future__ import annotations

from pathlib import Path

from hotspot.att.issue_share import IssueAccumulator, IssueWeights, TraceCeilings, trace_ceilings
from hotspot.capture import CodeRow
from hotspot.plan.engine import run_plan
from tests.plan_data import analysis

MFMA = "v_mfma_f32_32x32x16_bf16 a[0:15], v[0:3], v[4:7], a[0:15]"  # gfx950: 8 passes = 32 cycles
# (row, ISA, category, address): the branch at 20 jumps -6 dwords from 24, back to row 10 at 0
ROWS = [(10, "s_barrier", "barrier", 0), (11, MFMA, "mfma", 4), (12, MFMA, "mfma", 12),
        (13, "s_cbranch_scc1 65530", "branch", 20), (14, "s_endpgm", "message", 24)]
DECODER_CAT = {"barrier": 9, "mfma": 6, "branch": 7, "message": 11}


def _write_waves(d: Path, iterations: int, mfma_duration: int) -> dict[int, tuple[int, int]]:
    """One wave per SIMD on two SIMDs, as their wave files' documents (handed to the wave pass's
    issue accumulator below as the pass does); returns {row: (hits, stall)} over both."""
    stats: dict[int, tuple[int, int]] = {}
    docs = []
    for simd in (0, 1):
        t, ins = 100, []
        for _ in range(iterations):
            for row, _isa, cat, _addr in ROWS[:4]:
                stall = 0  # the stall the rules read is the analysis table's (below)
                dur = mfma_duration if cat == "mfma" else 4 + stall
                ins.append([t, DECODER_CAT[cat], stall, dur, row])
                t += dur
        ins.append([t, 11, 0, 4, 14])
        t += 4
        for r in ins:
            h, s = stats.get(r[4], (0, 0))
            stats[r[4]] = (h + 1, s + r[2])
        doc = {"name": "SE0", "duration": t - 100, "num_insts": len(ins), "num_stitched": len(ins),
               "wave": {"cu": 1, "simd": simd, "slot": 0, "id": 0, "begin": 100, "end": t,
                        "instructions": ins, "timeline": [[2, t - 100]], "waitcnt": []}}
        docs.append((simd, doc))
    _WAVES[d] = docs
    return stats


_WAVES: dict[Path, list[tuple[int, dict]]] = {}


def _ceilings(d: Path, stats: dict[int, tuple[int, int]]) -> TraceCeilings | None:
    rows = [CodeRow(row, isa, "", None, 0, addr, stats[row][0], 4 * stats[row][0], 0, 0)
            for row, isa, _cat, addr in ROWS]
    weights = IssueWeights(rows, "gfx950")
    acc = IssueAccumulator()
    for simd, doc in _WAVES[d]:
        w = doc["wave"]
        ins = w["instructions"]
        acc.add_wave(weights, (0, w["cu"], simd), w["begin"], w["end"], [r[4] for r in ins],
                     [r[0] for r in ins], [r[3] for r in ins])
    return trace_ceilings(acc, weights, [(10, 13)])


def _analysis(d: Path, stats: dict[int, tuple[int, int]], barrier_stall: int) -> object:
    instructions = []
    for row, isa, cat, _addr in ROWS:
        hits, stall = stats[row]
        stall = barrier_stall if cat == "barrier" else stall
        instructions.append({"line_number": row, "isa": isa, "category": cat, "hit": hits,
                             "latency": stall + 4 * hits, "stall": stall, "issue": 4 * hits})
    total = sum(i["stall"] for i in instructions)
    out = analysis({
        "dispatch": {"path": str(d), "kernel": "k", "waves": 2},
        "totals": {"stall": total, "latency": total + 10_000},
        "instructions": instructions,
        "stall_by_category": [{"category": "barrier", "stall": barrier_stall, "share": 1.0}],
        "loops": [{"first_line_number": 10, "last_line_number": 13, "iterations": 40,
                   "iterations_per_wave": 20.0, "waves": 2, "stall": total, "share": 1.0}],
    })
    out.ceilings = _ceilings(d, stats)
    return out


def test_a_loop_at_the_matrix_core_gets_the_verdict_not_latency_items(tmp_path: Path) -> None:
    stats = _write_waves(tmp_path, iterations=20, mfma_duration=32)  # 64 of 72 cycles: 89%
    outcome = run_plan(_analysis(tmp_path, stats, barrier_stall=5_000))  # type: ignore[arg-type]
    ranked = [i for i in outcome.items if i.kind != "capture"]
    first = ranked[0]
    assert first.id == "matrix-core-bound" and first.priority == "LOW" and first.rank == 1
    busy = next(e.value for e in first.evidence if e.metric == "mfma_busy")
    assert isinstance(busy, float) and abs(busy - 64 / 72) < 0.02
    assert "89% of the matrix core" in first.title
    # the barrier in that loop is not a latency item: the verdict states it
    assert "barrier-dominated" not in [i.id for i in ranked]
    assert any(s.id == "barrier-dominated" and "matrix-core-bound" in s.reason for s in outcome.skipped)
    assert outcome.ceilings is not None and outcome.ceilings.kernel.simds[0].mfma_cycles == 20 * 64


def test_below_the_threshold_latency_items_stay_under_the_trace_ceiling(tmp_path: Path) -> None:
    stats = _write_waves(tmp_path, iterations=20, mfma_duration=96)  # 64 of 200 cycles: 32%
    outcome = run_plan(_analysis(tmp_path, stats, barrier_stall=5_000))  # type: ignore[arg-type]
    ids = [i.id for i in outcome.items]
    assert "matrix-core-bound" not in ids and "barrier-dominated" in ids
    assert any(s.id == "matrix-core-bound" and "busy at most" in s.reason for s in outcome.skipped)
    item = next(i for i in outcome.items if i.id == "barrier-dominated")
    loop = outcome.ceilings.loops[0] if outcome.ceilings else None
    assert loop is not None and item.estimate.high_pct is not None
    assert item.estimate.high_pct <= 100 * loop.time_share * (1 - max(loop.mfma_busy, loop.valu_busy)) + 0.01


def test_roof_verdicts_go_before_code_items_but_not_before_a_bigger_launch_item() -> None:
    from hotspot.plan.engine import _verdicts_first
    from hotspot.plan.location import Location
    from hotspot.plan.model import Estimate, Evidence, Kind, PlanItem

    def item(id_: str, kind: Kind, high: float, verdict: bool = False) -> PlanItem:
        ev = [Evidence("at_the_roof", True)] if verdict else []
        return PlanItem(id_, "LOW", id_, kind, Location(None, None, None, None, "k"), ev, "", "",
                        Estimate(high / 2, high, "", 0, 0.0))

    launch_big = item("grid-underfill", Kind.LAUNCH, 60.0)
    code = item("load-in-mfma-loop", Kind.CODE, 30.0)
    launch_small = item("occupancy-grid", Kind.LAUNCH, 5.0)
    verdict = item("matrix-core-bound", Kind.CODE, 4.0, verdict=True)
    got = _verdicts_first([launch_big, code, launch_small, verdict])
    assert [i.id for i in got] == ["grid-underfill", "matrix-core-bound", "load-in-mfma-loop", "occupancy-grid"]
    assert [i.id for i in _verdicts_first([launch_small, verdict])] == ["occupancy-grid", "matrix-core-bound"]


def test_the_bound_scope_is_worked_out_once_per_plan(tmp_path: Path, monkeypatch) -> None:
    """The rule and the engine's ceilings both ask which scope is at the matrix core: one answer."""
    import hotspot.plan.ceiling_rules as ceiling_rules

    calls: list[object] = []
    real = ceiling_rules._bound_scope

    def spy(tc):  # type: ignore[no-untyped-def]
        calls.append(tc)
        return real(tc)

    monkeypatch.setattr(ceiling_rules, "_bound_scope", spy)
    stats = _write_waves(tmp_path, iterations=20, mfma_duration=32)
    outcome = run_plan(_analysis(tmp_path, stats, barrier_stall=5_000))  # type: ignore[arg-type]
    assert [i.id for i in outcome.items if i.kind != "capture"][0] == "matrix-core-bound"
    assert len(calls) == 1
    # and the engine used that answer: the loop's barrier left as the verdict's
    assert any(s.id == "barrier-dominated" and "matrix-core-bound" in s.reason for s in outcome.skipped)


def test_the_verdict_explains_the_rows_of_its_loop(tmp_path: Path) -> None:
    """Coverage: the verdict explains the whole stall of the loop at the matrix core (rows 10-13,
    the bound scope's), not of the row after it."""
    from dataclasses import replace

    stats = _write_waves(tmp_path, iterations=20, mfma_duration=32)
    a = _analysis(tmp_path, stats, barrier_stall=5_000)
    a.instructions = [replace(i, stall=700) if i.line_number == 14 else i  # type: ignore[attr-defined]
                      for i in a.instructions]  # type: ignore[attr-defined]
    a.totals = replace(a.totals, stall=5_700)  # type: ignore[attr-defined]
    outcome = run_plan(a)  # type: ignore[arg-type]
    assert [i.id for i in outcome.items if i.kind != "capture"][0] == "matrix-core-bound"
    cov = outcome.coverage
    assert cov is not None and cov.total_stall == 5_700
    assert [(r.line_number, r.explained) for r in cov.rows] == [(10, 5_000)]  # the loop's stalled row
    assert cov.explained == 5_000  # row 14's 700, after the loop, is not the verdict's
