"""The expert rules of issue 15 point 4, each planted in a synthetic dispatch: the planted cause is
item #1, one item for all its sites, with the share the waits/instructions give independently (±2
points); and the look-alikes that must not fire."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plan_data import plan_of
from tests.test_plan_grouping import _invariants, planned
from tests.test_plan_rules import base, ins

SHARE_TOLERANCE_PTS = 2.0


def ids(data: dict) -> list[str]:
    return [i["id"] for i in data["plan"]]


def share_pct(data: dict, cycles: float) -> float:
    return 100 * cycles / data["totals"]["stall"]


def blamed(data: dict, rows: set[int], wait_rows: set[int] | None = None) -> float:
    return sum(p["blamed_stall"] for w in data["waits"] for p in w["producers"]
               if p["line_number"] in rows and (wait_rows is None or w["line_number"] in wait_rows))


# ---- kernel arguments ---------------------------------------------------------------------------------

def test_kernarg_round_trips_entry_and_mid_kernel_are_one_item(tmp_path: Path) -> None:
    rows = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "v_mov_b32 v0, s4",
            "s_load_dword s8, s[0:1], 0x40", "s_waitcnt lgkmcnt(0)", "v_mul_f32 v1, s8, v0",
            "s_load_dword s9, s[0:1], 0x48", "s_waitcnt lgkmcnt(0)", "v_mul_f32 v2, s9, v1", "s_endpgm"]
    data = planned(tmp_path, rows)
    assert ids(data)[0] == "kernarg-loads", ids(data)
    items = [i for i in data["plan"] if i["id"] == "kernarg-loads"]
    assert len(items) == 1 and "short-load-distance" not in ids(data)
    item = items[0]
    assert sorted(s["wait_row"] for s in item["sites"]) == [2, 5, 8]
    assert abs(item["estimate"]["target_stall_pct"] - share_pct(data, blamed(data, {1, 4, 7}))) <= SHARE_TOLERANCE_PTS
    # rows 4 and 7 run after the first wait: hoist those to the entry batch; row 1 is the entry
    assert "#4, #7" in item["fix"] and "#1" not in item["fix"].split("Rows")[1]
    _invariants(data)


def test_kernarg_loads_at_the_entry_are_not_told_to_hoist(tmp_path: Path) -> None:
    rows = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dwordx2 s[6:7], s[0:1], 0x8",
            "s_waitcnt lgkmcnt(0)", "v_mov_b32 v0, s4", "v_mov_b32 v1, s6", "s_endpgm"]
    item = next(i for i in planned(tmp_path, rows)["plan"] if i["id"] == "kernarg-loads")
    assert "already at the kernel entry" in item["fix"] and "hoist" not in item["fix"].lower()
    # one wait already: batching gains nothing, only preloading does (low end 0)
    assert item["estimate"]["low_pct"] == 0.0 and item["estimate"]["high_pct"] > 0


# ---- stores gating a vmcnt wait ------------------------------------------------------------------------

def test_store_gated_vmcnt_is_item_one(tmp_path: Path) -> None:
    """Stores issued well before the load (a long chain of work in between) and one vmcnt(0) for
    both: moving the load above the stores gains their lead, so store gating is item #1."""
    stores = [f"global_store_dwordx4 v[40:41], v[{4 * k}:{4 * k + 3}], off offset:{64 * k}" for k in range(4)]
    work = [f"v_fma_f32 v{30 + k % 2}, v{30 + (k + 1) % 2}, v{30 + (k + 1) % 2}, v30" for k in range(120)]
    rows = stores + work + ["global_load_dwordx4 v[20:23], v[42:43], off", "s_waitcnt vmcnt(0)",
                            "v_add_f32 v24, v20, v21", "s_endpgm"]
    wait_row = len(stores) + len(work) + 2
    data = planned(tmp_path, rows)
    assert ids(data)[0] == "store-gated-vmcnt", ids(data)
    item = data["plan"][0]
    assert len(item["sites"]) == 1 and item["sites"][0]["wait_row"] == wait_row
    assert item["sites"][0]["producer_rows"] == [1, 2, 3, 4]
    assert abs(item["estimate"]["target_stall_pct"] - share_pct(data, blamed(data, {1, 2, 3, 4}))) <= SHARE_TOLERANCE_PTS
    # bounded by the stores' lead over the load: at most lead / stall-per-wait of the target
    ev = {e["metric"]: e["value"] for e in item["evidence"]}
    wait = next(w for w in data["waits"] if w["line_number"] == wait_row)
    spw = wait["stall"] / wait["hits"]
    assert item["estimate"]["high_pct"] <= 100 * item["estimate"]["target_cycles"] / data["totals"]["latency"] \
        * min(0.9, ev["store_lead_cycles"] / spw) + 0.01
    _invariants(data)


def test_load_issued_right_after_the_stores_is_its_own_short_distance(tmp_path: Path) -> None:
    """The awaited load right after the stores: swapping them gains nothing, so no store gating;
    the load's own distance is the item."""
    stores = [f"global_store_dwordx4 v[40:41], v[{4 * k}:{4 * k + 3}], off offset:{64 * k}" for k in range(4)]
    rows = stores + ["global_load_dwordx4 v[20:23], v[42:43], off", "s_waitcnt vmcnt(0)",
                     "v_add_f32 v24, v20, v21", "s_endpgm"]
    data = planned(tmp_path, rows)
    assert "store-gated-vmcnt" not in ids(data)
    assert any(s["id"] == "store-gated-vmcnt" and "right after the stores" in s["reason"]
               for s in data["plan_skipped"])
    _invariants(data)


def test_stores_after_the_load_or_alone_are_not_store_gating(tmp_path: Path) -> None:
    after = ["global_load_dwordx4 v[20:23], v[42:43], off", "global_store_dwordx4 v[40:41], v[0:3], off",
             "s_waitcnt vmcnt(0)", "v_add_f32 v24, v20, v21", "s_endpgm"]
    assert "store-gated-vmcnt" not in ids(planned(tmp_path / "a", after))
    alone = ["global_store_dwordx4 v[40:41], v[0:3], off", "s_waitcnt vmcnt(0)",
             "global_atomic_add_f32 v[40:41], v5, off", "s_endpgm"]
    assert "store-gated-vmcnt" not in ids(planned(tmp_path / "b", alone))


# ---- s_nop in VALU dependency chains --------------------------------------------------------------------

def test_nop_padded_valu_chains_are_one_item(tmp_path: Path) -> None:
    rows = ["v_mov_b32 v1, 0"]
    for k in range(6):
        rows += [f"v_cmp_gt_f32 vcc, v{2 + k}, v1", "s_nop 1", f"v_cndmask_b32 v{10 + k}, v1, v{2 + k}, vcc"]
    rows += ["s_endpgm"]
    data = planned(tmp_path, rows)
    assert ids(data)[0] == "valu-dependency-chain", ids(data)
    item = data["plan"][0]
    nops = [i for i in data["instructions"] if i["isa"].startswith("s_nop")]
    assert len(item["sites"]) == len(nops) == 6
    assert {s["producer_rows"][1] for s in item["sites"]} == {i["line_number"] for i in nops}
    expected = share_pct(data, sum(i["stall"] for i in nops))
    assert abs(item["estimate"]["target_stall_pct"] - expected) <= SHARE_TOLERANCE_PTS
    assert "v_cmp_gt_f32 -> s_nop 1 -> v_cndmask_b32" in str(item["evidence"])
    _invariants(data)


def test_nop_outside_a_valu_chain_is_not_flagged(tmp_path: Path) -> None:
    rows = ["s_mov_b32 s0, 0", "s_nop 4", "s_mov_b32 s1, 1", "v_add_f32 v1, v2, v3", "s_endpgm"]
    assert "valu-dependency-chain" not in ids(planned(tmp_path, rows))


def test_nop_between_valus_without_a_def_use_chain_is_not_flagged(tmp_path: Path) -> None:
    """Adjacency is not a dependency: the VALU after the s_nop reads nothing the one before writes."""
    rows = ["v_mov_b32 v1, 0"]
    for k in range(6):
        rows += [f"v_add_f32 v{2 + k}, v1, v1", "s_nop 1", f"v_mul_f32 v{10 + k}, v30, v31"]
    rows += ["s_endpgm"]
    data = planned(tmp_path, rows)
    assert "valu-dependency-chain" not in ids(data)
    assert any(s["id"] == "valu-dependency-chain" and "straight-line" in s["reason"] for s in data["plan_skipped"])


def test_nop_chain_names_the_real_producer_above_an_unrelated_valu(tmp_path: Path) -> None:
    """v_cmp writes VCC, an unrelated VALU follows, then s_nop and the v_cndmask reading VCC: the
    chain is v_cmp -> v_cndmask (rows 2k+2 -> 2k+4 of each group), not the adjacent VALU."""
    rows = ["v_mov_b32 v1, 0"]
    for k in range(6):
        rows += [f"v_cmp_gt_f32 vcc, v{2 + k}, v1", f"v_add_f32 v{20 + k}, v1, v1", "s_nop 1",
                 f"v_cndmask_b32 v{10 + k}, v1, v{2 + k}, vcc"]
    rows += ["s_endpgm"]
    data = planned(tmp_path, rows)
    item = next(i for i in data["plan"] if i["id"] == "valu-dependency-chain")
    # 1-based rows: group k is v_cmp at 4k+2, v_add 4k+3, s_nop 4k+4, v_cndmask 4k+5
    assert {tuple(s["producer_rows"]) for s in item["sites"]} == {(4 * k + 2, 4 * k + 4, 4 * k + 5) for k in range(6)}
    assert "vcc_lo" in item["root_cause"]


def test_nop_before_a_branch_target_is_not_a_chain(tmp_path: Path) -> None:
    """The VALU after the s_nop heads a loop: it is also reached from the back edge (a control-flow
    join), so the VALU before the s_nop is not its only producer."""
    rows = ["v_cmp_gt_f32 vcc, v2, v1", "s_nop 1", "v_cndmask_b32 v10, v1, v2, vcc",
            "v_cmp_gt_f32 vcc, v10, v1", "s_add_u32 s0, s0, 1", "s_cmp_lt_u32 s0, 8", "s_cbranch_scc1 -5",
            "s_endpgm"]
    data = planned(tmp_path, rows, loops=[(2, 6, 8)])
    assert "valu-dependency-chain" not in ids(data)


# ---- a wave spinning on a flag ---------------------------------------------------------------------------

SPIN = ["s_mov_b32 s0, 0",
        "global_load_dword v1, v[2:3], off sc0 sc1", "s_waitcnt vmcnt(0)", "v_cmp_eq_u32 vcc, 0, v1",
        "s_cbranch_vccnz -4",
        "s_barrier", "global_atomic_add_f32 v[2:3], v4, off", "s_endpgm"]


def test_flag_poll_is_one_spin_item_not_hoist_or_vectorize(tmp_path: Path) -> None:
    data = planned(tmp_path, SPIN, loops=[(1, 4, 30)])
    assert ids(data) == ["spin-wait-barrier"], ids(data)
    item = data["plan"][0]
    assert item["location"]["line_number"] == 2
    in_loop = sum(i["stall"] for i in data["instructions"] if 2 <= i["line_number"] <= 5)
    barrier = sum(i["stall"] for i in data["instructions"] if i["isa"] == "s_barrier")
    assert abs(item["estimate"]["target_stall_pct"] - share_pct(data, in_loop + barrier)) <= SHARE_TOLERANCE_PTS
    assert "balance" not in item["fix"].lower().split("do not balance")[1]


def test_coherent_loads_in_an_mfma_loop_are_not_a_poll(tmp_path: Path) -> None:
    rows = ["s_mov_b32 s0, 0", "global_load_dwordx4 v[0:3], v[8:9], off sc1", "s_waitcnt vmcnt(0)",
            "v_cmp_eq_u32 vcc, 0, v1", "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]",
            "s_cbranch_vccnz -5", "global_atomic_add_f32 v[8:9], v4, off", "s_endpgm"]
    assert "spin-wait-barrier" not in ids(planned(tmp_path, rows, loops=[(1, 5, 20)]))


def test_barrier_held_by_a_poll_gets_no_balance_advice() -> None:
    rows = [ins(1, "global_load_dword v1, v[2:3], off sc1", "vmem-load", stall=100),
            ins(2, "s_waitcnt vmcnt(0)", "wait-vmcnt", stall=20_000),
            ins(3, "v_cmp_eq_u32 vcc, 0, v1", "valu"),
            ins(4, "s_cbranch_vccnz -4", "branch"),
            ins(5, "s_barrier", "barrier", stall=60_000),
            ins(6, "global_atomic_add_f32 v[2:3], v4, off", "vmem-atomic"),
            ins(7, "s_endpgm", "message")]
    data = base(rows, waits=[])
    data["loops"] = [{"first_line_number": 1, "last_line_number": 4, "iterations": 100}]
    out = plan_of(data)
    assert [i.id for i in out.items][:1] == ["spin-wait-barrier"]
    assert "barrier held" in out.items[0].title
    barrier = [s for s in out.skipped if s.id == "barrier-dominated"]
    assert barrier and "spin-wait-barrier" in barrier[0].reason
    assert out.items[0].estimate.target_cycles == 80_100


# ---- over-conservative drains ------------------------------------------------------------------------------

TWO_LOADS = ["global_load_dwordx4 v[0:3], v[20:21], off", "global_load_dwordx4 v[4:7], v[20:21], off offset:16",
             "s_waitcnt vmcnt(0)"]


def test_drain_of_a_load_not_read_yet_is_item_one(tmp_path: Path) -> None:
    rows = TWO_LOADS + ["v_add_f32 v8, v0, v1", "v_add_f32 v9, v2, v3", "v_mul_f32 v8, v8, v9",
                        "s_waitcnt vmcnt(0)", "v_add_f32 v10, v4, v5", "s_endpgm"]
    data = planned(tmp_path, rows)
    assert ids(data)[0] == "conservative-drain", ids(data)
    item = data["plan"][0]
    # the newer load (row 2, v[4:7]) is read only after the second wait: vmcnt(1) would do at row 3
    assert [(s["wait_row"], s["producer_rows"]) for s in item["sites"]] == [(3, [2])]
    assert abs(item["estimate"]["target_stall_pct"] - share_pct(data, blamed(data, {2}, {3}))) <= SHARE_TOLERANCE_PTS
    _invariants(data)


def test_drain_whose_consumers_read_every_load_is_not_flagged(tmp_path: Path) -> None:
    rows = TWO_LOADS + ["v_add_f32 v8, v0, v4", "s_endpgm"]
    assert "conservative-drain" not in ids(planned(tmp_path / "a", rows))
    branch = TWO_LOADS + ["v_add_f32 v8, v0, v1", "s_cbranch_scc1 2", "v_add_f32 v9, v4, v5", "s_endpgm"]
    assert "conservative-drain" not in ids(planned(tmp_path / "b", branch))  # reads past a branch unknown


def test_scalar_loads_are_never_a_counted_wait_case(tmp_path: Path) -> None:
    """An outstanding SMEM makes lgkmcnt out of order (HARDWARE.md §3): lgkmcnt(0) is required."""
    rows = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dword s8, s[0:1], 0x40", "s_waitcnt lgkmcnt(0)",
            "v_mov_b32 v0, s4", "v_mov_b32 v1, s5", "s_waitcnt vmcnt(0)", "v_mul_f32 v2, s8, v0", "s_endpgm"]
    assert "conservative-drain" not in ids(planned(tmp_path, rows))


# ---- invariants over generated mixes of the planted patterns ------------------------------------------------

SNIPPETS = {
    "kernarg": lambda k: [f"s_load_dword s{20 + k}, s[0:1], {hex(4 * k)}", "s_waitcnt lgkmcnt(0)",
                          f"v_mov_b32 v{60 + k}, s{20 + k}"],
    "store_then_load": lambda k: [f"global_store_dwordx4 v[40:41], v[{4 * (k % 4)}:{4 * (k % 4) + 3}], off",
                                  f"global_load_dwordx4 v[{20 + 4 * (k % 4)}:{23 + 4 * (k % 4)}], v[42:43], off",
                                  "s_waitcnt vmcnt(0)", f"v_add_f32 v50, v{20 + 4 * (k % 4)}, v1"],
    "nop_chain": lambda k: [f"v_cmp_gt_f32 vcc, v{2 + k % 8}, v1", "s_nop 1", f"v_cndmask_b32 v{30 + k % 8}, v1, v2, vcc"],
    "drain": lambda k: TWO_LOADS + ["v_add_f32 v8, v0, v1", "s_waitcnt vmcnt(0)", "v_add_f32 v9, v4, v5"],
    "narrow": lambda k: [f"global_load_ushort v{10 + k % 8}, v[2:3], off offset:{2 * k}", "s_waitcnt vmcnt(0)",
                         f"v_add_f32 v{20 + k % 8}, v{10 + k % 8}, v1"],
    "valu": lambda k: [f"v_fma_f32 v{30 + k % 8}, v1, v2, v3"],
}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(picks=st.lists(st.sampled_from(sorted(SNIPPETS)), min_size=1, max_size=10), seed=st.integers(0, 10_000))
def test_invariants_hold_on_generated_pattern_mixes(tmp_path_factory, picks: list[str], seed: int) -> None:
    rows = [r for k, name in enumerate(picks) for r in SNIPPETS[name](k)] + ["s_endpgm"]
    data = planned(tmp_path_factory.mktemp("mix"), rows, seed=seed)
    _invariants(data)
    code = [i for i in data["plan"] if i["kind"] != "capture"]
    assert sum(i["estimate"]["target_stall_pct"] for i in code if i["id"] in
               {"kernarg-loads", "conservative-drain", "store-gated-vmcnt", "valu-dependency-chain",
                "load-in-mfma-loop", "lds-read-before-mfma", "back-to-back-loads", "short-load-distance"}) <= 100 + 0.1
    # every kernel-argument round trip and every s_nop chain of the (loop-free) body is one item
    for rule in ("kernarg-loads", "valu-dependency-chain"):
        assert len([i for i in code if i["id"] == rule]) <= 1, rule
