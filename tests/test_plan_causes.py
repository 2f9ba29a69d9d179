"""Issue 24 point 5: every rule checks its cause before claiming it, and every estimate is bounded
(roofs, idle CUs, the share the target sits on). Hand-built plain analysis data; every expected
number is computed here from the data, not read back from the plan."""

from __future__ import annotations

import pytest

from tests.plan_data import context_of, plan_of
from hotspot.plan.load_mobility import load_mobility
from tests.test_plan_rules import base, ids, ins, item, occ_data, prod, skipped, wait

MI350X_CUS = 256  # HARDWARE.md §5
MI350X_PEAK_GBPS = 8000.0


def launch(workgroups: int, wg: int = 256, duration_ns: int = 100_000, cus: int = MI350X_CUS) -> dict:
    return {"grid": [wg * workgroups, 1, 1], "workgroup": [wg, 1, 1], "workgroups": workgroups,
            "duration_ns": duration_ns, "cus": cus, "source": "kt.csv", "peak_hbm_gbps": MI350X_PEAK_GBPS}


def streaming(waves: int = 100) -> dict:
    """A load that is the first instruction after the kernel-argument wait, whose data the next
    instructions need: nothing can move (exposed streaming latency)."""
    rows = [ins(1, "s_load_dwordx4 s[4:7], s[0:1], 0x0", "smem", hit=waves),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", hit=waves, stall=2_000),
            # the offset s2 is the workgroup id (a system SGPR): every workgroup streams its own bytes
            ins(3, "buffer_load_dwordx4 v[0:3], v8, s[4:7], s2 offen", "vmem-load", hit=waves),
            ins(4, "s_waitcnt vmcnt(0)", "wait-vmcnt", hit=waves, stall=80_000),
            ins(5, "v_add_f32 v0, v0, v1", "valu", hit=waves),
            ins(6, "buffer_store_dwordx4 v[0:3], v8, s[4:7], s2 offen", "vmem-store", hit=waves),
            ins(7, "s_endpgm", "message", hit=waves)]
    waits = [wait(2, rows[1]["isa"], 2_000, waves, [prod(1, rows[0]["isa"], "smem", 2_000, 8, 1)]),
             wait(4, rows[3]["isa"], 80_000, waves, [prod(3, rows[2]["isa"], "vmem-load", 80_000, 8, 1)])]
    data = base(rows, waits=waits)
    data["dispatch"]["waves"] = waves
    return data


# ---- exposed streaming latency ---------------------------------------------------------------------

def test_a_load_first_after_its_operands_wait_is_exposed_latency_not_hoist() -> None:
    data = streaming()
    mob = load_mobility(context_of(data), 3, 4, [3])
    assert mob is not None and mob.depends_on_wait == 2 and mob.cycles == 0
    it = item(plan_of(data), "short-load-distance")
    assert it.title.startswith("exposed load latency")
    assert "hoist" not in it.fix.lower().replace("do not hoist", "") and "bytes in flight" in it.fix
    assert "scale factors" not in it.root_cause  # a 16-byte tile load is not a scale/descriptor load


def test_exposed_latency_near_the_roof_is_the_bandwidth_item() -> None:
    data = streaming()
    # 16 B x 64 lanes x 2 VMEM rows per wave over 1,000 workgroups of 4 waves in the duration below:
    # 80% of the MI350X peak
    per_wave = 16 * 64 * 2
    waves = 1000 * 4
    duration = int(per_wave * waves / (0.8 * MI350X_PEAK_GBPS))
    data["occupancy"] = {"launch": launch(1000, duration_ns=duration)}
    out = plan_of(data)
    assert "short-load-distance" not in ids(out)
    assert any("bandwidth" in s.reason for s in skipped(out, "short-load-distance"))
    bw = item(out, "bandwidth-bound")
    fraction = per_wave * waves / duration / MI350X_PEAK_GBPS
    assert bw.estimate.low_pct == 0 and bw.estimate.high_pct == pytest.approx(100 * (1 - fraction), abs=0.05)
    assert [i.id for i in out.items if i.kind != "capture"][0] == "bandwidth-bound"
    assert all(i.estimate.high_pct <= bw.estimate.high_pct + 0.01 for i in out.items if i.kind != "capture")


def test_a_load_with_independent_work_above_it_keeps_a_bounded_hoist_claim() -> None:
    data = streaming()
    # 40 independent VALU rows between the argument wait and the load, each 100 cycles per wave
    extra = [ins(100 + k, f"v_mul_f32 v{20 + k % 4}, v{20 + k % 4}, v30", "valu", hit=100, stall=9_600)
             for k in range(40)]
    rows = data["instructions"][:2] + extra + data["instructions"][2:]
    for n, r in enumerate(rows, 1):
        r["line_number"] = n
    waits = [wait(2, rows[1]["isa"], 2_000, 100, [prod(1, rows[0]["isa"], "smem", 2_000, 8, 1)]),
             wait(44, rows[43]["isa"], 80_000, 100, [prod(43, rows[42]["isa"], "vmem-load", 80_000, 8, 1)])]
    data2 = base(rows, waits=waits)
    data2["dispatch"]["waves"] = 100
    mob = load_mobility(context_of(data2), 43, 44, [43])
    assert mob is not None and mob.hoist_rows == list(range(3, 43))
    room = 40 * (9_600 + 400) / 100  # latency per wave of the 40 rows
    assert mob.hoist_cycles == pytest.approx(room)
    it = item(plan_of(data2), "short-load-distance")
    assert not it.title.startswith("exposed") and "#3-#42" in it.fix
    spw = 80_000 / 100
    bound = min(0.9, room / spw)
    target_pct = 100 * 80_000 / data2["totals"]["latency"]
    assert it.estimate.high_pct == pytest.approx(target_pct * bound, abs=0.02)


# ---- store gating -----------------------------------------------------------------------------------

def test_store_gating_needs_the_stores_to_lead_the_load() -> None:
    rows = [ins(1, "global_store_dwordx4 v[40:41], v[0:3], off", "vmem-store"),
            ins(2, "global_load_dwordx4 v[20:23], v[42:43], off", "vmem-load"),
            ins(3, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=60_000),
            ins(4, "v_add_f32 v24, v20, v21", "valu"), ins(5, "s_endpgm", "message")]
    spw = 600

    def plan(store_cycles: float) -> object:
        w = wait(3, rows[2]["isa"], 60_000, 100,
                 [prod(1, rows[0]["isa"], "vmem-store", 30_000, store_cycles, 2),
                  prod(2, rows[1]["isa"], "vmem-load", 30_000, 8, 1)]) | {"category": "wait-vmcnt"}
        return plan_of(base(rows, waits=[w]))

    right_after = plan(8 + 4)  # the store is one slot older than the load
    assert "store-gated-vmcnt" not in ids(right_after)
    assert any("right after the stores" in s.reason for s in skipped(right_after, "store-gated-vmcnt"))
    lead = 400.0  # the store was issued 400 cycles before the load
    it = item(plan(8 + lead), "store-gated-vmcnt")
    target_pct = 100 * 30_000 / (60_000 + 4 * 500)
    assert it.estimate.high_pct == pytest.approx(target_pct * min(0.9, lead / spw), abs=0.02)
    assert it.title.count("(") <= 1


# ---- grid, occupancy ----------------------------------------------------------------------------------

def test_grid_underfill_is_bounded_by_the_idle_share_and_needs_the_grid() -> None:
    data = occ_data("vgpr", waves=2)
    data["occupancy"]["launch"] = launch(215)  # 41 of 256 CUs idle: 16%
    out = plan_of(data)
    it = item(out, "grid-underfill")
    idle = (MI350X_CUS - 215) / MI350X_CUS
    assert it.estimate.high_pct == pytest.approx(100 * idle, abs=0.01)
    assert it.estimate.low_pct == pytest.approx(50 * idle, abs=0.01)
    assert it.priority == "HIGH" and "mostly idle" not in it.root_cause
    # ranks by its bound like any item: by the middle of the range
    mids = [(i.estimate.low_pct + i.estimate.high_pct) / 2 for i in out.items if i.kind != "capture"]
    assert mids == sorted(mids, reverse=True)
    unknown = occ_data("vgpr", waves=2)
    unknown["occupancy"]["launch"] = None
    assert "grid-underfill" not in ids(plan_of(unknown))


def test_no_high_item_with_a_zero_bound() -> None:
    data = occ_data("vgpr", waves=2)
    data["occupancy"]["launch"] = launch(255)  # 1 idle CU: 0.4%
    it = item(plan_of(data), "grid-underfill")
    assert it.priority == "LOW" and it.estimate.high_pct < 3


def test_occupancy_limit_is_not_the_lever_when_the_grid_cannot_fill_it() -> None:
    data = occ_data("vgpr", waves=2)
    data["occupancy"]["launch"] = launch(300, wg=256)  # 300 x 4 waves over 256 CUs x 4 SIMDs: 1.17/SIMD
    out = plan_of(data)
    assert "occupancy-vgpr" not in ids(out)
    assert any("more workgroups" in s.reason for s in skipped(out, "occupancy-vgpr"))


def test_one_more_wave_is_priced_in_rounds_of_the_grid() -> None:
    """1,024 workgroups of 4 waves on 256 CUs: 2 per CU at 2 waves/SIMD (2 rounds), 3 per CU at 3
    (1,024 / 768 -> 2 rounds): the extra wave leaves the rounds unchanged; 1,536 go from 3 to 2."""
    neutral = occ_data("vgpr", waves=2)
    neutral["occupancy"]["launch"] = launch(1024, wg=256)
    out = plan_of(neutral)
    assert "occupancy-vgpr" not in ids(out)
    assert any("2 round(s) at both 2 and 3" in s.reason for s in skipped(out, "occupancy-vgpr"))
    gains = occ_data("vgpr", waves=2)
    gains["occupancy"]["launch"] = launch(1536, wg=256)
    assert "occupancy-vgpr" in ids(plan_of(gains))


def test_persistent_grid_below_the_allowed_occupancy_is_an_item() -> None:
    data = occ_data("vgpr", waves=5, achieved=1.75)
    data["occupancy"]["limits"]["vgpr"] = 5
    data["occupancy"]["launch"] = launch(2 * MI350X_CUS, wg=256)  # CUs x 2, 4 waves each: 2 per SIMD
    it = item(plan_of(data), "occupancy-grid")
    assert it.kind == "launch"
    grid = 2 * MI350X_CUS * 4 / (MI350X_CUS * 4)
    high = 1 - grid / 5
    wait_pct = 100 * 60_000 / data["totals"]["latency"]
    assert it.estimate.high_pct == pytest.approx(wait_pct * high, abs=0.02)
    assert it.estimate.low_pct == pytest.approx(wait_pct * high * 0.25, abs=0.02)


# ---- roofs ----------------------------------------------------------------------------------------------

def test_bandwidth_above_peak_caps_nothing() -> None:
    data = streaming()
    per_wave = 16 * 64 * 2
    waves = 1000 * 4
    data["occupancy"] = {"launch": launch(1000, duration_ns=int(per_wave * waves / (1.5 * MI350X_PEAK_GBPS)))}
    out = plan_of(data)
    assert not any("capped at" in i.estimate.basis for i in out.items)


def _ping_pong(highest_vgpr: int, read: str = "ds_read_b128 v[0:3], v10",
               mfma: str = "v_mfma_f32_16x16x32_bf16 v[100:103], v[0:3], v[4:7], v[100:103]",
               waves: int = 2, grid: dict | None = None) -> object:
    """An LDS read waited on right before its MFMA; the ISA's highest VGPR is `highest_vgpr`."""
    rows = [ins(1, read, "lds"), ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=50_000),
            ins(3, mfma, "mfma"), ins(4, f"v_mov_b32 v{highest_vgpr}, 0", "valu"),
            ins(5, "s_endpgm", "message")]
    w = wait(2, rows[1]["isa"], 50_000, 100, [prod(1, rows[0]["isa"], "lds", 50_000, 8, 1)])
    occ = {"waves_per_simd": waves, "limiter": "vgpr", "limiters": ["vgpr"],
           "limits": {"hardware": 8, "vgpr": waves}, "details": {"vgpr_allocated": 512 // waves}}
    if grid is not None:
        occ["launch"] = grid
    return plan_of(base(rows, waits=[w], occupancy=occ))


def test_lds_ping_pong_pays_the_wave_its_registers_cost() -> None:
    # the ISA's real use decides the room (not the allocation): v199 -> 200 in use of 256 at 2 waves
    free = item(_ping_pong(199), "lds-read-before-mfma")   # 56 free: the 4 it needs fit
    tight = item(_ping_pong(255), "lds-read-before-mfma")  # none free: 2 -> 1 wave/SIMD
    assert tight.estimate.high_pct == pytest.approx(free.estimate.high_pct / 2, abs=0.01)
    assert "Free 4 VGPRs" in tight.fix and "uses 256 of the 256" in tight.fix


def test_ping_pong_needs_the_whole_mfma_operand() -> None:
    """One read fills v[70:73], the MFMA reads v[70:77]: a second fragment set is 8 registers.
    At 3 waves/SIMD a wave may hold 512 // 3 = 170 -> 168 (granule 8); the ISA uses 164: 4 free."""
    tight = item(_ping_pong(163, read="ds_read_b128 v[70:73], v10",
                            mfma="v_mfma_f32_32x32x16_bf16 v[100:115], v[70:77], v[80:87], v[100:115]", waves=3),
                 "lds-read-before-mfma")
    needed = next(e for e in tight.evidence if e.metric == "fragment_vgprs_needed")
    assert (needed.value, needed.threshold) == (8, 4)
    assert "Free 4 VGPRs" in tight.fix and "uses 164 of the 168" in tight.fix


def test_a_lost_wave_is_priced_in_rounds_of_the_grid() -> None:
    """1,024 workgroups of 4 waves on 256 CUs: 2 rounds at 3 waves/SIMD (3 per CU) and at 2 (2 per
    CU), so losing the third wave costs nothing; 1,536 take 2 rounds at 3 and 3 at 2."""
    args = dict(read="ds_read_b128 v[70:73], v10",
                mfma="v_mfma_f32_32x32x16_bf16 v[100:115], v[70:77], v[80:87], v[100:115]", waves=3)
    free = item(_ping_pong(100, **args), "lds-read-before-mfma")
    neutral = item(_ping_pong(163, grid=launch(1024), **args), "lds-read-before-mfma")
    costly = item(_ping_pong(163, grid=launch(1536), **args), "lds-read-before-mfma")
    assert neutral.estimate.high_pct == pytest.approx(free.estimate.high_pct, abs=0.01)
    assert costly.estimate.high_pct == pytest.approx(free.estimate.high_pct * 2 / 3, abs=0.01)
    rounds = {e.metric: e.value for e in neutral.evidence}
    assert (rounds["grid_rounds"], rounds["grid_rounds_after"]) == (2, 2)


def test_a_surer_gain_ranks_before_a_wider_one() -> None:
    """0-25% may be nothing; 13-23% is something either way: order by the middle of the range."""
    rows = [ins(1, "s_load_dwordx4 s[4:7], s[0:1], 0x0", "smem"),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=30_000),
            ins(3, "s_mov_b32 s0, 0", "salu"),
            ins(4, "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "vmem-load"),
            ins(5, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=26_000),
            ins(6, "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]", "mfma"),
            ins(7, "s_cbranch_scc1 3", "branch"), ins(8, "s_endpgm", "message")]
    waits = [wait(2, rows[1]["isa"], 30_000, 100, [prod(1, rows[0]["isa"], "smem", 30_000, 8, 1)]),
             wait(5, rows[4]["isa"], 26_000, 100, [prod(4, rows[3]["isa"], "vmem-load", 26_000, 8, 1)])]
    out = plan_of(base(rows, waits=waits, loops=[{"first_line_number": 3, "last_line_number": 7}]))
    ka, loop = item(out, "kernarg-loads"), item(out, "load-in-mfma-loop")
    assert ka.estimate.low_pct == 0 and ka.estimate.high_pct > loop.estimate.high_pct
    assert (loop.estimate.low_pct + loop.estimate.high_pct) > ka.estimate.high_pct
    order = [i.id for i in out.items]
    assert order.index("load-in-mfma-loop") < order.index("kernarg-loads")


def test_sweep_summary_names_item_one_not_a_capture_item() -> None:
    from hotspot.plan.location import Location
    from hotspot.plan.model import Estimate, PlanItem
    from hotspot.sweep.entry_summary import plan_columns

    def item(id_: str, kind: str, file: str | None, high: float | None) -> PlanItem:
        return PlanItem(id_, "MED", "t", kind, Location(file, 3 if file else None, None, None, "k"), [], "", "",
                        Estimate(None if high is None else 5.0, high, "", 0, 0.0))

    top, headroom = plan_columns([item("source-collapse", "capture", None, None), item("load-in-mfma-loop", "code",
                                                                                       "k.py", 9.0)])
    assert top is not None and top.id == "load-in-mfma-loop" and (top.file, top.line) == ("k.py", 3)
    assert headroom == 9.0
    assert plan_columns([item("source-collapse", "capture", None, None)]) == (None, None)


def test_a_lost_wave_is_priced_in_rounds_of_the_measured_grid() -> None:
    """No launch row: the capture ran in one round, 250 wave starts on 4 traced SEs of an MI350X
    (8 XCDs x 4 SEs) with 4-wave workgroups -> 250 / 4 x 32 / 4 = 500 workgroups, one round at 3
    and at 2 waves/SIMD (512 per round): losing the third wave is neutral; 300 starts -> 600
    workgroups take 2 rounds at 2 waves/SIMD: the gain halves."""
    args = dict(read="ds_read_b128 v[70:73], v10",
                mfma="v_mfma_f32_32x32x16_bf16 v[100:115], v[70:77], v[80:87], v[100:115]", waves=3)

    def measured(starts: int) -> object:
        import copy

        from tests.plan_data import plan_of as run
        from tests.test_plan_rules import base as base_data

        rows = [ins(1, args["read"], "lds"), ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=50_000),
                ins(3, args["mfma"], "mfma"), ins(4, "v_mov_b32 v163, 0", "valu"), ins(5, "s_endpgm", "message")]
        w = wait(2, rows[1]["isa"], 50_000, 100, [prod(1, rows[0]["isa"], "lds", 50_000, 8, 1)])
        occ = {"waves_per_simd": 3, "limiter": "vgpr", "limiters": ["vgpr"],
               "limits": {"hardware": 8, "vgpr": 3}, "details": {"vgpr_allocated": 168, "waves_per_workgroup": 4},
               "achieved": {"mean_waves_per_simd": 2.9, "peak_waves_per_simd": 3, "waves": starts,
                            "busy_cus_per_se": {str(se): 8 for se in range(4)}, "one_round": True}}
        data = base_data(rows, waits=[w], occupancy=copy.deepcopy(occ))
        data["arch"]["product"] = "AMD Instinct MI350X"
        return item(run(data), "lds-read-before-mfma")

    free = item(_ping_pong(100, **args), "lds-read-before-mfma")
    assert measured(250).estimate.high_pct == pytest.approx(free.estimate.high_pct, abs=0.01)
    assert measured(300).estimate.high_pct == pytest.approx(free.estimate.high_pct / 2, abs=0.01)
