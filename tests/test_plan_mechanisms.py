"""The mechanism rules of issue 33 on hand-built analyses (tests/plan_data.py): ping-pong barriers
judged by what precedes them, the saturated streaming verdict, store epilogues. Each fires on its
pattern, and its look-alikes stay silent."""

from __future__ import annotations

from tests.plan_data import plan_of
from tests.test_plan_rules import base, ids, ins, item, skipped

MFMA = "v_mfma_f32_32x32x16_bf16 v[100:115], v[0:7], v[8:15], v[100:115]"


def _pingpong(ahead_hits: int, waves: int = 8, trips: int = 16) -> dict:
    """8 waves; row 2 is a barrier inside a branch run by `ahead_hits` waves; the loop (rows 3-12)
    holds a memory phase then barrier #6, an MFMA cluster then barrier #10."""
    it = waves * trips
    rows = [ins(1, "s_cbranch_execz 1", "branch", hit=waves),
            ins(2, "s_barrier", "barrier", hit=ahead_hits, stall=500),
            ins(3, "buffer_load_dwordx4 v[20:23], v30, s[4:7], 0 offen lds", "vmem-load", hit=it),
            ins(4, "ds_read_b128 v[0:3], v31", "lds", hit=it),
            ins(5, "s_waitcnt vmcnt(0) lgkmcnt(0)", "wait-mixed", hit=it, stall=2_000),
            ins(6, "s_barrier", "barrier", hit=it, stall=40_000),   # after the memory phase: the design
            ins(7, MFMA, "mfma", hit=it, stall=100),
            ins(8, MFMA, "mfma", hit=it, stall=100),
            ins(9, MFMA, "mfma", hit=it, stall=100),
            ins(10, "s_barrier", "barrier", hit=it, stall=12_000),  # after the MFMA cluster: lost time
            ins(11, "s_add_u32 s0, s0, 1", "salu", hit=it),
            ins(12, "s_cbranch_scc1 -10", "branch", hit=it),
            ins(13, "s_endpgm", "message", hit=waves)]
    data = base(rows, loops=[{"first_line_number": 3, "last_line_number": 12, "iterations_per_wave": float(trips)}])
    data["dispatch"] = {"kernel": "k0", "symbol": "k0", "path": "/x", "waves": waves}
    return data


def test_pingpong_barrier_after_the_mfma_cluster_is_the_item() -> None:
    out = plan_of(_pingpong(ahead_hits=4))
    it = item(out, "pingpong-barrier")
    assert it.location.line_number == 10 and it.estimate.target_cycles == 12_000
    assert [s.producer_rows for s in it.sites] == [[10]]
    ev = {e.metric: e.value for e in it.evidence}
    assert ev["ahead_barrier_row"] == 2 and ev["after_memory_barrier_rows"] == "#6"
    assert ev["after_memory_barrier_stall_cycles"] == 40_000
    # the barrier after the memory phase (the hottest one) is not an item of any rule
    assert "barrier-dominated" not in ids(out)
    assert any("pingpong-barrier" in s.reason for s in skipped(out, "barrier-dominated"))


def test_barriers_run_by_every_wave_are_not_a_pingpong_schedule() -> None:
    out = plan_of(_pingpong(ahead_hits=8))
    assert "pingpong-barrier" not in ids(out)
    assert any("not a ping-pong" in s.reason for s in skipped(out, "pingpong-barrier"))
    assert item(out, "barrier-dominated").location.line_number == 6  # the ordinary rule judges it
