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
            ins(13, "s_cbranch_execnz 1", "branch", hit=waves),
            ins(14, "s_barrier", "barrier", hit=waves - ahead_hits, stall=500),  # the other half catches up
            ins(15, "s_endpgm", "message", hit=waves)]
    data = base(rows, loops=[{"first_line_number": 3, "last_line_number": 12, "iterations_per_wave": float(trips)}])
    data["dispatch"] = {"kernel": "k0", "symbol": "k0", "path": "/x", "waves": waves}
    return data


def test_pingpong_barrier_after_the_mfma_cluster_is_the_item() -> None:
    out = plan_of(_pingpong(ahead_hits=4))
    it = item(out, "pingpong-barrier")
    assert it.location.line_number == 10 and it.estimate.target_cycles == 12_000
    assert [s.producer_rows for s in it.sites] == [[10]]
    ev = {e.metric: e.value for e in it.evidence}
    # #6 (after the memory phase) is released by the other half's MFMA cluster at #10: the design
    assert ev["ahead_barrier_row"] == 2 and ev["lost_share_per_barrier"] == "#6: 0%, #10: 100%"
    assert ev["design_barrier_stall_cycles"] == 40_000
    # the barrier after the memory phase (the hottest one) is not an item of any rule
    assert "barrier-dominated" not in ids(out)
    assert any("pingpong-barrier" in s.reason for s in skipped(out, "barrier-dominated"))


def test_four_phase_pingpong_loses_the_windows_without_mfma() -> None:
    """Four loop barriers after MFMA, memory, memory, memory phases (Triton's four-phase ping-pong):
    each barrier's waves are released by the other half at the next and the previous barrier, so
    only the waits released by the MFMA phase (#before the first barrier) are the design."""
    waves, trips = 8, 16
    it = waves * trips
    load = "buffer_load_dwordx4 v[20:23], v30, s[4:7], 0 offen lds"
    rows = [ins(1, "s_cbranch_execz 1", "branch", hit=waves), ins(2, "s_barrier", "barrier", hit=4, stall=100),
            ins(3, MFMA, "mfma", hit=it), ins(4, MFMA, "mfma", hit=it),
            ins(5, "s_barrier", "barrier", hit=it, stall=1_000),   # after MFMA
            ins(6, load, "vmem-load", hit=it), ins(7, "s_barrier", "barrier", hit=it, stall=2_000),  # after memory
            ins(8, "ds_read_b128 v[0:3], v31", "lds", hit=it),
            ins(9, "s_barrier", "barrier", hit=it, stall=4_000),   # after memory
            ins(10, load, "vmem-load", hit=it), ins(11, "s_barrier", "barrier", hit=it, stall=8_000),  # after memory
            ins(12, "s_cbranch_scc1 -10", "branch", hit=it), ins(13, "s_barrier", "barrier", hit=4, stall=100),
            ins(14, "s_endpgm", "message", hit=waves)]
    data = base(rows, loops=[{"first_line_number": 3, "last_line_number": 12, "iterations_per_wave": float(trips)}])
    data["dispatch"] = {"kernel": "k0", "symbol": "k0", "path": "/x", "waves": waves}
    it_ = item(plan_of(data), "pingpong-barrier")
    ev = {e.metric: e.value for e in it_.evidence}
    # #5: partners #7, #11 (memory) -> lost; #7: #9 memory, #5 MFMA -> half; #9: #11, #7 -> lost;
    # #11: #5 MFMA, #9 memory -> half
    assert ev["lost_share_per_barrier"] == "#5: 100%, #7: 50%, #9: 100%, #11: 50%"
    assert it_.estimate.target_cycles == 1_000 + 1_000 + 4_000 + 4_000
    assert it_.location.line_number in (9, 11)


def test_a_barrier_skipped_by_early_exit_waves_is_not_a_pingpong_schedule() -> None:
    """Half the waves run the barrier before the loop but no barrier after it is run by the others
    (they exited early): no catch-up partner, so not a ping-pong offset."""
    data = _pingpong(ahead_hits=4)
    data["instructions"] = [i for i in data["instructions"] if i["line_number"] != 14]
    out = plan_of(data)
    assert "pingpong-barrier" not in ids(out) and "barrier-dominated" in ids(out)


def test_barriers_run_by_every_wave_are_not_a_pingpong_schedule() -> None:
    out = plan_of(_pingpong(ahead_hits=8))
    assert "pingpong-barrier" not in ids(out)
    assert any("not a ping-pong" in s.reason for s in skipped(out, "pingpong-barrier"))
    assert item(out, "barrier-dominated").location.line_number == 6  # the ordinary rule judges it


def _epilogue(store: str, offsets: list[int], store_stall: int) -> dict:
    """A loop of loads and MFMAs (rows 1-4), then one store per offset (the epilogue)."""
    rows = [ins(1, "buffer_load_dwordx4 v[0:3], v30, s[4:7], 0 offen", "vmem-load", hit=64),
            ins(2, "s_waitcnt vmcnt(0)", "wait-vmcnt", hit=64, stall=10_000),
            ins(3, MFMA, "mfma", hit=64, stall=500),
            ins(4, "s_cbranch_scc1 -4", "branch", hit=64)]
    for k, off in enumerate(offsets):
        rows.append(ins(5 + k, f"{store} v[66:67], v[{2 * k}:{2 * k + 1}], off offset:{off}", "vmem-store",
                        hit=4, stall=store_stall))
    rows.append(ins(5 + len(offsets), "s_endpgm", "message", hit=4))
    data = base(rows, loops=[{"first_line_number": 1, "last_line_number": 4, "iterations_per_wave": 16.0}])
    data["dispatch"] = {"kernel": "k0", "symbol": "k0", "path": "/x", "waves": 4}
    return data


def test_row_strided_narrow_epilogue_stores_are_an_item() -> None:
    """16 global_store_dwordx2 per wave at a 2 KB stride (the flash-attention epilogue of issue 33)."""
    data = _epilogue("global_store_dwordx2", [2048 * k for k in range(16)], 800)
    it = item(plan_of(data), "store-epilogue")
    ev = {e.metric: e.value for e in it.evidence}
    assert ev["store_bytes_per_lane"] == 8 and ev["store_offset_stride_bytes"] == 2048
    assert ev["stores_per_wave"] == 16.0 and it.estimate.target_cycles == 16 * 800
    # high = 1 - 8/16 of the store stall, as a share of the waves' cycles
    total = sum(r["latency"] for r in data["instructions"])
    assert abs(it.estimate.high_pct - 100 * 0.5 * 16 * 800 / total) < 0.01
    assert "transpose" in it.fix and "2,048 B apart" in it.title


def test_the_store_stride_counts_the_address_advanced_between_stores() -> None:
    """The same offset every time, the address register advanced by 0x2000 between stores (the
    compiler's form when the offset field cannot hold the step): an 8 KB stride."""
    rows = [ins(1, "buffer_load_dwordx4 v[0:3], v30, s[4:7], 0 offen", "vmem-load", hit=64),
            ins(2, "s_waitcnt vmcnt(0)", "wait-vmcnt", hit=64, stall=10_000),
            ins(3, MFMA, "mfma", hit=64, stall=500), ins(4, "s_cbranch_scc1 -4", "branch", hit=64)]
    n = 5
    for k in range(8):
        rows.append(ins(n, f"global_store_dwordx2 v[60:61], v[{2 * k}:{2 * k + 1}], off", "vmem-store",
                        hit=4, stall=2_000))
        rows.append(ins(n + 1, "v_add_co_u32_e32 v60, vcc, 0x2000, v60", "valu", hit=4))
        rows.append(ins(n + 2, "v_addc_co_u32_e32 v61, vcc, 0, v61, vcc", "valu", hit=4))
        n += 3
    rows.append(ins(n, "s_endpgm", "message", hit=4))
    data = base(rows, loops=[{"first_line_number": 1, "last_line_number": 4, "iterations_per_wave": 16.0}])
    data["dispatch"] = {"kernel": "k0", "symbol": "k0", "path": "/x", "waves": 4}
    ev = {e.metric: e.value for e in item(plan_of(data), "store-epilogue").evidence}
    assert ev["store_offset_stride_bytes"] == 0x2000


def test_wide_contiguous_or_cheap_epilogues_are_not_items() -> None:
    wide = _epilogue("global_store_dwordx4", [16 * k for k in range(4)], 800)
    out = plan_of(wide)
    assert "store-epilogue" not in ids(out)
    assert any("already stores 16 bytes" in s.reason for s in skipped(out, "store-epilogue"))
    cheap = _epilogue("global_store_dwordx2", [2048 * k for k in range(16)], 10)
    assert "store-epilogue" not in ids(plan_of(cheap))


# ---- a saturated streaming kernel ------------------------------------------------------------------------

def _saturated(achieved: float = 7.6, product: str | None = "AMD Instinct MI350X",
               wait_stall: int = 600_000) -> dict:
    """vec_add's shape: argument wait, one 16-byte load, its wait, an add, one 16-byte store."""
    from tests.test_plan_rules import prod, wait

    waves = 100
    rows = [ins(1, "s_load_dwordx4 s[4:7], s[0:1], 0x0", "smem", hit=waves),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", hit=waves, stall=2_000),
            ins(3, "buffer_load_dwordx4 v[0:3], v8, s[4:7], s2 offen", "vmem-load", hit=waves),
            ins(4, "s_waitcnt vmcnt(0)", "wait-vmcnt", hit=waves, stall=wait_stall),
            ins(5, "v_add_f32 v0, v0, v1", "valu", hit=waves),
            ins(6, "buffer_store_dwordx4 v[0:3], v8, s[4:7], s2 offen", "vmem-store", hit=waves),
            ins(7, "s_endpgm", "message", hit=waves)]
    waits = [wait(2, rows[1]["isa"], 2_000, waves, [prod(1, rows[0]["isa"], "smem", 2_000, 8, 1)]),
             wait(4, rows[3]["isa"], wait_stall, waves, [prod(3, rows[2]["isa"], "vmem-load", wait_stall, 8, 1)])]
    data = base(rows, waits=waits)
    data["dispatch"]["waves"] = waves
    data["arch"]["product"] = product
    data["occupancy"] = {"waves_per_simd": 8, "limiter": "hardware", "limiters": ["hardware"],
                         "limits": {"hardware": 8, "vgpr": 8, "sgpr": 8, "lds": 8, "workgroup": 8},
                         "achieved": {"mean_waves_per_simd": achieved, "peak_waves_per_simd": 8}}
    return data


def test_streaming_at_the_wave_limit_is_a_verdict_that_caps_the_latency_items() -> None:
    data = _saturated()
    out = plan_of(data)
    first = next(i for i in out.items if i.kind != "capture")
    assert first.id == "streaming-saturated", ids(out)
    # the exposed-latency item is the same cause: stated by the verdict, not beside it
    assert "short-load-distance" not in ids(out)
    assert any("streaming-saturated" in s.reason for s in skipped(out, "short-load-distance"))
    # the streaming bound, recomputed: 2 x 16 B x 64 lanes per wave over its cycles, 7.6 waves x 4
    # SIMDs per CU, 256 CUs at the MI350X's 2,200 MHz against 8,000 GB/s
    per_wave = 2 * 16 * 64
    cycles = sum(r["latency"] for r in data["instructions"]) / 100
    gbps = 7.6 * 4 * per_wave / cycles * 256 * 2200e6 / 1e9
    ev = {e.metric: e.value for e in first.evidence}
    assert 0.2 < gbps / 8000 < 1 and abs(ev["trace_fraction_of_peak"] - gbps / 8000) < 0.001
    assert first.estimate.high_pct == round(100 * (1 - gbps / 8000), 2)
    for other in out.items:
        if other.kind == "code" and other.estimate.high_pct is not None:
            assert other.estimate.high_pct <= first.estimate.high_pct + 1e-9, other.id


def test_below_the_wave_limit_or_with_mfma_it_is_not_saturated() -> None:
    low = _saturated()
    low["occupancy"]["waves_per_simd"] = 4
    low["occupancy"]["limits"]["hardware"] = 8
    assert "streaming-saturated" not in ids(plan_of(low))
    sparse = _saturated(achieved=3.0)  # the SIMDs are not full: the grid, not the limit
    assert "streaming-saturated" not in ids(plan_of(sparse))


# ---- a one-shot backward branch is not a loop -----------------------------------------------------------

def test_a_backward_branch_taken_once_per_wave_is_not_a_loop() -> None:
    """The back edge #6 -> #2 is a plain s_branch run once per wave (a prologue block laid out after
    the code it jumps back to); its header may run often (it is also a real loop's head), the branch
    itself does not: the load in its range is not "inside the MFMA loop"."""
    from tests.test_plan_rules import mfma_loop_data

    once = mfma_loop_data(distance_cycles=8)
    once["dispatch"]["waves"] = 100
    once["loops"] = [{"first_line_number": 2, "last_line_number": 6, "iterations_per_wave": 12.0, "waves": 100}]
    out = plan_of(once)  # row 6 ran 100 times for 100 waves: once each
    assert "load-in-mfma-loop" not in ids(out) and "short-load-distance" in ids(out)
    repeated = mfma_loop_data(distance_cycles=8)
    repeated["dispatch"]["waves"] = 50
    repeated["loops"] = [{"first_line_number": 2, "last_line_number": 6, "iterations_per_wave": 2.0, "waves": 50}]
    assert "load-in-mfma-loop" in ids(plan_of(repeated))  # 100 runs of #6 for 50 waves: 2 each


def test_waits_inside_a_pingpong_memory_phase_are_not_wait_items() -> None:
    """The memory phase's LDS wait (#5) is covered by the other half's MFMA cluster by design: no
    wait rule claims it in a ping-pong schedule; without the schedule it is an ordinary item."""
    from tests.test_plan_rules import prod, wait

    def with_wait(ahead_hits: int) -> dict:
        data = _pingpong(ahead_hits)
        rows = {r["line_number"]: r for r in data["instructions"]}
        rows[5]["stall"] = 30_000
        data["waits"] = [wait(5, rows[5]["isa"], 30_000, rows[5]["hit"],
                              [prod(4, rows[4]["isa"], "lds", 30_000, 8, 1)])]
        return data

    pingpong = plan_of(with_wait(4))
    assert not any(i.sites and any(s.wait_row == 5 for s in i.sites) for i in pingpong.items), ids(pingpong)
    ordinary = plan_of(with_wait(8))
    assert any(i.sites and any(s.wait_row == 5 for s in i.sites) for i in ordinary.items), ids(ordinary)
