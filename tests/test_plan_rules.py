"""Each plan rule on hand-built analyses (partial JSON made typed by tests/plan_data.py): fires with the right location, stays silent
without its pattern, and is skipped (not crashed) when its inputs are absent."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from hotspot.plan.engine import AMDAHL_MIN_STALL_SHARE, priority_of
from hotspot.plan.rules import RULES
from tests.plan_data import plan_of

SRC = "/k/kernel.py"


def ins(n, isa, category, hit=100, stall=0, latency=None, line=None):
    return {"line_number": n, "isa": isa, "category": category, "hit": hit, "stall": stall,
            "latency": latency if latency is not None else stall + 4 * hit,
            "share": 0.0, "source": f"{SRC}:{line or n}"}


def base(instructions, total_stall=None, gfx="gfx950", **extra):
    stall = sum(i["stall"] for i in instructions) if total_stall is None else total_stall
    latency = sum(i["latency"] for i in instructions)
    cats: dict[str, int] = {}
    for i in instructions:
        cats[i["category"]] = cats.get(i["category"], 0) + i["stall"]
    data = {
        "dispatch": {"kernel": "k0", "symbol": "k0", "path": "/x"},
        "arch": {"gfx": gfx, "known": True},
        "mode": "cycles",
        "totals": {"stall": stall, "latency": max(latency, stall)},
        "stall_by_category": [{"category": c, "stall": s} for c, s in cats.items()],
        "instructions": instructions,
        "instruction_mix": [{"category": c, "dynamic": sum(i["hit"] for i in instructions
                                                            if i["category"] == c)} for c in cats],
        "findings": [],
    }
    data.update(extra)
    return data


def ids(outcome):
    return [i.id for i in outcome.items]


def item(outcome, rule_id):
    found = [i for i in outcome.items if i.id == rule_id]
    assert found, f"{rule_id} did not fire; skipped: {outcome.skipped}"
    return found[0]


def skipped(outcome, rule_id):
    return [s for s in outcome.skipped if s.id == rule_id]


def wait(n, isa, stall, hits, producers):
    return {"line_number": n, "isa": isa, "stall": stall, "hits": hits, "producers": producers}


def prod(n, isa, category, blamed, d_cycles, d_instr):
    return {"line_number": n, "isa": isa, "category": category, "source": f"{SRC}:{n}",
            "blamed_stall": blamed, "share": 1.0, "median_distance_cycles": d_cycles,
            "median_distance_instructions": d_instr}


# ---- loads inside the MFMA loop ------------------------------------------------------------------

def mfma_loop_data(distance_cycles):
    rows = [ins(1, "s_mov_b32 s0, 0", "salu"),
            ins(2, "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "vmem-load"),
            ins(3, "v_add_u32 v9, v9, v10", "valu"),
            ins(4, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=80_000),
            ins(5, "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]", "mfma", stall=400),
            ins(6, "s_cbranch_scc1 2", "branch"),
            ins(7, "s_endpgm", "message")]
    w = wait(4, rows[3]["isa"], 80_000, 100,
             [prod(2, rows[1]["isa"], "vmem-load", 80_000, distance_cycles, 1)])
    return base(rows, waits=[w], loops=[{"first_line_number": 2, "last_line_number": 6}])


def test_load_in_mfma_loop_fires_at_the_load():
    out = plan_of(mfma_loop_data(distance_cycles=8))
    it = item(out, "load-in-mfma-loop")
    assert (it.location.line_number, it.location.file, it.location.line) == (2, SRC, 2)
    assert it.location.isa.startswith("buffer_load_dwordx4")
    # cover = 8 / (8 + 80000/100) is far below 0.5
    cover = [e for e in it.evidence if e.metric == "cover_ratio"][0]
    assert cover.value == pytest.approx(8 / 808, abs=1e-3) and cover.threshold == 0.5
    assert it.estimate.target_cycles == 80_000
    # the same pair is not also reported by the generic rule
    assert "short-load-distance" not in ids(out)


def test_load_in_mfma_loop_silent_when_load_is_covered():
    out = plan_of(mfma_loop_data(distance_cycles=2000))  # cover 2000/2800 > 0.5
    assert "load-in-mfma-loop" not in ids(out)
    assert skipped(out, "load-in-mfma-loop")[0].status == "not-triggered"


def test_load_outside_any_mfma_loop_is_not_an_mfma_loop_item():
    data = mfma_loop_data(8)
    data["loops"] = []
    out = plan_of(data)
    assert "load-in-mfma-loop" not in ids(out)
    assert item(out, "short-load-distance").location.line_number == 2


def test_missing_loops_means_missing_input_not_a_crash():
    data = mfma_loop_data(8)
    del data["loops"]
    out = plan_of(data)
    s = skipped(out, "load-in-mfma-loop")
    assert s and s[0].status == "missing-input" and "data.loops" in s[0].reason


# ---- LDS read consumed right away by an MFMA -------------------------------------------------------

def lds_data(next_isa, next_cat):
    rows = [ins(1, "ds_read_b128 v[0:3], v10", "lds"),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=20_000),
            ins(3, next_isa, next_cat),
            ins(4, "s_endpgm", "message")]
    w = wait(2, rows[1]["isa"], 20_000, 100, [prod(1, rows[0]["isa"], "lds", 20_000, 4, 0)])
    return base(rows, waits=[w])


def test_lds_read_before_mfma_fires_at_the_ds_read():
    out = plan_of(lds_data("v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]", "mfma"))
    assert item(out, "lds-read-before-mfma").location.line_number == 1


def test_lds_read_followed_by_valu_is_not_the_mfma_rule():
    out = plan_of(lds_data("v_add_f32 v1, v0, v2", "valu"))
    assert "lds-read-before-mfma" not in ids(out)
    it = item(out, "short-load-distance")
    assert it.location.line_number == 1 and it.title.startswith("LDS read")


def test_lds_write_is_not_treated_as_a_load():
    data = lds_data("s_barrier", "barrier")
    data["instructions"][0]["isa"] = "ds_write_b128 v10, v[0:3]"
    data["waits"][0]["producers"][0]["isa"] = "ds_write_b128 v10, v[0:3]"
    out = plan_of(data)
    assert not {"short-load-distance", "lds-read-before-mfma"} & set(ids(out))


# ---- back-to-back loads ------------------------------------------------------------------------------

def b2b_data(d_instr):
    rows = [ins(1, "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "vmem-load"),
            ins(2, "buffer_load_dwordx4 v[4:7], v9, s[4:7], 0 offen", "vmem-load"),
            ins(3, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=100_000),
            ins(4, "v_add_f32 v0, v0, v4", "valu"),
            ins(5, "s_endpgm", "message")]
    w = wait(3, rows[2]["isa"], 100_000, 100,
             [prod(1, rows[0]["isa"], "vmem-load", 50_000, 8, d_instr[0]),
              prod(2, rows[1]["isa"], "vmem-load", 50_000, 4, d_instr[1])])
    return base(rows, waits=[w])


def test_back_to_back_loads_fires_at_first_load():
    out = plan_of(b2b_data((1, 0)))
    it = item(out, "back-to-back-loads")
    assert it.location.line_number == 1
    assert it.estimate.target_cycles == 100_000
    assert {"loads_in_group", "load_rows"} <= {e.metric for e in it.evidence}


def test_loads_with_compute_between_are_not_back_to_back():
    out = plan_of(b2b_data((20, 19)))  # 20 instructions between: compute was there
    assert "back-to-back-loads" not in ids(out)


# ---- scale/address load too close to use -------------------------------------------------------------

def test_scale_load_too_close_names_scale_and_location():
    rows = [ins(1, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt"),
            ins(2, "v_add_u32 v1, v1, v2", "valu"),
            ins(3, "s_load_dword s8, s[0:1], 0x40", "smem"),
            ins(4, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=30_000),
            ins(5, "v_mul_f32 v3, s8, v3", "valu"),
            ins(6, "s_endpgm", "message")]
    w = wait(4, rows[3]["isa"], 30_000, 100, [prod(3, rows[2]["isa"], "smem", 30_000, 4, 0)])
    out = plan_of(base(rows, waits=[w]))
    # an s_load outside loops is a kernel argument: its own rule, never also the generic one
    assert "short-load-distance" not in ids(out)
    it = item(out, "kernarg-loads")
    assert it.location.line_number == 3
    assert "#3" in it.fix and "move them to the entry" in it.fix  # a wait precedes it: it can move up


def test_kernel_entry_load_gets_the_preload_advice():
    rows = [ins(1, "s_load_dwordx2 s[4:5], s[0:1], 0x0", "smem"),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=30_000),
            ins(3, "s_endpgm", "message")]
    w = wait(2, rows[1]["isa"], 30_000, 100, [prod(1, rows[0]["isa"], "smem", 30_000, 4, 0)])
    it = item(plan_of(base(rows, waits=[w])), "kernarg-loads")
    assert "kernarg-preload" in it.fix and "already at the kernel entry" in it.fix
    assert "hoist" not in it.fix.lower() and "move them" not in it.fix


# ---- lgkm cross-lane -----------------------------------------------------------------------------------

def xl_data(cross, lds):
    rows = [ins(1, "ds_bpermute_b32 v1, v2, v3", "cross-lane"),
            ins(2, "s_waitcnt lgkmcnt(0)", "wait-lgkmcnt", stall=cross + lds),
            ins(3, "s_endpgm", "message")]
    w = wait(2, rows[1]["isa"], cross + lds, 100, [prod(1, rows[0]["isa"], "cross-lane", cross, 8, 0)])
    lb = {"stall": cross + lds, "classes": [{"producer_class": "lds", "stall": lds},
                                            {"producer_class": "cross-lane", "stall": cross}]}
    return base(rows, waits=[w], lgkm_breakdown=lb)


def test_lgkm_cross_lane_fires_at_the_shuffle():
    it = item(plan_of(xl_data(cross=9_000, lds=1_000)), "lgkm-cross-lane")
    assert it.location.line_number == 1 and it.estimate.target_cycles == 9_000
    share = [e for e in it.evidence if e.metric == "cross_lane_share_of_lgkm_wait"][0]
    assert share.value == pytest.approx(0.9)


def test_lgkm_cross_lane_silent_when_lds_dominates():
    assert "lgkm-cross-lane" not in ids(plan_of(xl_data(cross=3_000, lds=7_000)))


# ---- MFMA rules ---------------------------------------------------------------------------------------------

def chain_rows(second_src_a):
    return [ins(1, "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], 0", "mfma", stall=0),
            ins(2, f"v_mfma_f32_32x32x8_f16 a[16:31], {second_src_a}, v[4:5], 0", "mfma", stall=2_800),
            ins(3, "s_endpgm", "message")]


def test_mfma_chain_fires_when_srcA_reads_previous_result():
    out = plan_of(base(chain_rows("a[0:1]"), gfx="gfx942"))
    it = item(out, "mfma-dependency-chain")
    assert it.location.line_number == 2
    dist = [e for e in it.evidence if e.metric == "distance_to_producer_instructions"][0]
    assert dist.value == 1
    assert [e.value for e in it.evidence if e.metric == "producer_latency_cycles"] == [32]


def test_same_accumulator_and_independent_mfmas_are_not_a_chain():
    out = plan_of(base(chain_rows("v[6:7]"), gfx="gfx942"))  # independent
    assert "mfma-dependency-chain" not in ids(out)
    rows = [ins(1, "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", "mfma"),
            ins(2, "v_mfma_f32_32x32x8_f16 a[0:15], v[4:5], v[6:7], a[0:15]", "mfma", stall=2_800),
            ins(3, "s_endpgm", "message")]
    assert "mfma-dependency-chain" not in ids(plan_of(base(rows, gfx="gfx942")))


def legacy_rows(op):
    return [ins(1, f"{op} a[0:15], v[0:1], v[2:3], a[0:15]", "mfma", hit=1000, stall=0),
            ins(2, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=100_000),
            ins(3, "s_endpgm", "message")]


def test_legacy_shape_on_gfx950_names_replacement_and_pipe_time():
    it = item(plan_of(base(legacy_rows("v_mfma_f32_32x32x8_f16"))), "legacy-mfma-shape")
    assert it.location.line_number == 1
    assert "v_mfma_f32_32x32x16_f16" in it.fix
    assert it.estimate.target_cycles == 1000 * 8 * 4  # executions x passes x 4 cycles


def test_legacy_shape_silent_on_gfx942_and_for_gfx950_shapes():
    assert "legacy-mfma-shape" not in ids(plan_of(base(legacy_rows("v_mfma_f32_32x32x8_f16"), gfx="gfx942")))
    assert "legacy-mfma-shape" not in ids(plan_of(base(legacy_rows("v_mfma_f32_32x32x16_f16"))))


# ---- occupancy and barriers -----------------------------------------------------------------------------------

def occ_data(limiter, waves=2, achieved=None, mfma=True):
    rows = [ins(1, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=60_000),
            ins(2, "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]" if mfma else
                "v_add_f32 v0, v1, v2", "mfma" if mfma else "valu", stall=1_000),
            ins(3, "s_endpgm", "message")]
    occ = {"waves_per_simd": waves, "limiter": limiter, "limiters": [limiter],
           "limits": {"hardware": 8, "vgpr": waves, "sgpr": 8, "lds": 8, "workgroup": 8},
           "next_step": {limiter: {"target_waves": waves + 1,
                                   "message": f"{waves + 1} waves/SIMD needs total VGPRs ≤ 168 (now 248): free 80"}}}
    if achieved is not None:
        occ["achieved"] = {"mean_waves_per_simd": achieved, "peak_waves_per_simd": waves}
    return base(rows, occupancy=occ)


def test_vgpr_occupancy_fires_with_next_step_and_spill_warning():
    it = item(plan_of(occ_data("vgpr")), "occupancy-vgpr")
    assert it.location.line_number is None and it.location.kernel == "k0"
    assert "free 80" in it.fix and "spill" in it.fix
    # the ISA's own registers (v7 and a3: 8 + 4 = 12) against the 168 a wave may hold at 3 waves
    assert "The ISA names only 12 VGPRs, within the 168" in it.fix
    # high = 1/(W+1) of the memory-wait stall, as % of cycles
    total = 60_000 + 1_000 + 4 * 300
    assert it.estimate.high_pct == pytest.approx(100 * 60_000 / total / 3, abs=0.01)
    assert it.estimate.low_pct == pytest.approx(it.estimate.high_pct * 0.25, abs=0.01)


def test_vgpr_occupancy_no_spill_warning_without_mfma():
    it = item(plan_of(occ_data("vgpr", mfma=False)), "occupancy-vgpr")
    assert "spill" not in it.fix


def test_occupancy_rules_respect_limiter_and_achieved_gap():
    assert "occupancy-vgpr" not in ids(plan_of(occ_data("lds")))
    assert item(plan_of(occ_data("lds")), "occupancy-lds").location.kernel == "k0"
    out = plan_of(occ_data("vgpr", waves=4, achieved=1.5))  # far below theoretical
    assert "occupancy-vgpr" not in ids(out)
    assert "launch tail" in skipped(out, "occupancy-vgpr")[0].reason


def test_barrier_dominated_at_hottest_barrier_with_spread():
    rows = [ins(1, "s_barrier", "barrier", stall=5_000),
            ins(2, "s_barrier", "barrier", stall=30_000),
            ins(3, "v_add_f32 v0, v1, v2", "valu", stall=65_000),
            ins(4, "s_endpgm", "message")]
    data = base(rows, barriers=[{"line_number": 2, "median_spread_cycles": 284}])
    it = item(plan_of(data), "barrier-dominated")
    assert it.location.line_number == 2 and it.estimate.target_cycles == 35_000
    assert [e.value for e in it.evidence if e.metric == "arrival_spread_cycles"] == [284]
    rows[0]["stall"], rows[1]["stall"] = 1_000, 3_000  # 4,000 of 69,000 = 5.8% of stall now
    assert "barrier-dominated" not in ids(plan_of(base(rows)))


# ---- capture rules, pmc, engine ----------------------------------------------------------------------------------

def test_capture_rules_from_findings():
    rows = [ins(1, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=10_000, line=28), ins(2, "s_endpgm", "message")]
    findings = [{"id": "source-collapse", "evidence": {"file": SRC, "line": 28, "share": 0.8,
                                                       "categories": ["a", "b", "c"],
                                                       "threshold_share": 0.5, "threshold_categories": 3,
                                                       "next_lines": []}},
                {"id": "idle-slice", "evidence": {"code_rows": 5000, "executed_instructions": 17,
                                                  "executed_share": 0.0034, "threshold_share": 0.05}}]
    out = plan_of(base(rows, findings=findings))
    sc = item(out, "source-collapse")
    assert (sc.location.file, sc.location.line, sc.location.line_number) == (SRC, 28, 1)
    # capture items are trust: no estimate (never "HIGH 0-0%"), listed before every other item
    assert sc.kind == "capture" and sc.estimate.high_pct is None and sc.estimate.withheld
    assert item(out, "idle-slice").kind == "capture"
    kinds = [i.kind for i in out.items]
    assert kinds == sorted(kinds, key=lambda k: k != "capture")
    assert "source-collapse" not in ids(plan_of(base(rows)))


def test_pmc_verdicts_become_items_only_with_pmc():
    rows = [ins(1, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=50_000), ins(2, "s_endpgm", "message")]
    pmc = {"kernel": "k0", "over_fetch": {"value": 2.0},
           "verdicts": [{"id": "over-fetch", "text": "over-fetch: 2.00x", "next": "find them",
                         "evidence": {"over_fetch": {"value": 2.0}, "threshold_ratio": 1.25},
                         "certain": True}]}
    assert not [i for i in ids(plan_of(base(rows))) if i.startswith("pmc-")]
    it = item(plan_of(base(rows), pmc), "pmc-over-fetch")
    assert it.location.line_number == 1 and it.kind == "memory"
    cycles = (50_000 + 4 * 100) + 4 * 100  # Σ latency: stall + 4 cycles per issue, both rows
    # redundant share 1 - 1/2 = 0.5, removable 50-100% of it
    assert it.estimate.high_pct == pytest.approx(100 * 50_000 / cycles * 0.5, abs=0.01)
    assert it.estimate.low_pct == pytest.approx(100 * 50_000 / cycles * 0.25, abs=0.01)


def test_amdahl_guard_drops_tiny_targets():
    data = lds_data("v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]", "mfma")
    data["totals"]["stall"] = int(20_000 / (AMDAHL_MIN_STALL_SHARE * 0.5))  # target = 0.5% of stall
    out = plan_of(data)
    assert "lds-read-before-mfma" not in ids(out)
    assert skipped(out, "lds-read-before-mfma")[0].status == "below-guard"


def test_priority_order_and_sorting():
    assert [priority_of(x) for x in (10.0, 9.99, 3.0, 2.99)] == ["HIGH", "MED", "MED", "LOW"]
    data = b2b_data((1, 0))
    data["barriers"] = []
    data["instructions"].append(ins(6, "s_barrier", "barrier", stall=30_000))
    data["stall_by_category"].append({"category": "barrier", "stall": 30_000})
    data["totals"]["stall"] += 30_000
    out = plan_of(data)
    highs = [i.estimate.high_pct for i in out.items]
    assert highs == sorted(highs, reverse=True) and len(out.items) >= 2
    for it in out.items:
        assert it.priority == priority_of(it.estimate.high_pct)
        assert it.estimate.low_pct <= it.estimate.high_pct


def test_every_rule_reports_itself_and_tolerates_minimal_data():
    data = base([ins(1, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=100), ins(2, "s_endpgm", "message")])
    out = plan_of(data)
    reported = {s.id for s in out.skipped} | set(ids(out))
    assert reported == {r.id for r in RULES}
    sampling = copy.deepcopy(data)
    sampling["mode"] = "pc-sampling"
    assert plan_of(sampling).items == []


def test_docs_list_every_rule_and_threshold():
    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "plan-rules.md").read_text()
    schema = (root / "docs" / "schema" / "plan.md").read_text()
    for rule in RULES:
        assert f"`{rule.id}`" in doc, rule.id
        assert rule.id in schema, rule.id
        for value in rule.thresholds.values():
            text = f"{value:g}"
            assert re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", doc) or \
                f"{value * 100:g}%" in doc, (rule.id, value)


def test_the_rule_table_names_each_rules_cause_and_ceiling():
    """docs/plan-rules.md "Every rule": one row per rule, a cause, and the trace ceiling named exactly
    where the engine applies it (code and memory items that neither remove compute nor are the
    bandwidth roof itself)."""
    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "plan-rules.md").read_text()
    section = doc.split("## Every rule: the cause it checks and the ceiling it respects", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([a-z0-9-]+)` \((\w+)\) \| (.+?) \| (.+?) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    assert {r.id for r in RULES} <= set(rows)  # rows of rules landing from other branches may lead
    for rule in RULES:
        kind, cause, ceiling = rows[rule.id]
        assert kind == rule.kind.value and cause.strip(), rule.id
        capped = rule.kind.value in ("code", "memory") and rule.gain.value != "removes-compute" \
            and rule.id != "bandwidth-bound"
        assert ("trace ceiling" in ceiling and "not the trace ceiling" not in ceiling) == capped, rule.id
