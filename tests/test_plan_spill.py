"""`register-spill` planted in synthetic dispatches: scratch reloads waited on inside a repeating
loop are item #1, their target is the stall the wait attribution blames on them plus the older
loads those waits drain (computed here from the waits, not the rule), and look-alikes stay silent."""

from __future__ import annotations

from pathlib import Path

from tests.test_plan_grouping import _invariants, planned

SHARE_TOLERANCE_PTS = 2.0
MFMA = "v_mfma_f32_16x16x32_bf16 v[100:103], v[0:3], v[4:7], v[100:103]"


def _loop_rows(reloads_in_loop: bool) -> tuple[list[str], list[tuple[int, int, int]]]:
    pre = ["s_mov_b32 s0, 0", "scratch_store_dword off, v60, off offset:0",
           "scratch_store_dwordx4 off, v[64:67], off offset:16"]
    reload = ["scratch_load_dword v60, off, off offset:0", "scratch_load_dwordx4 v[64:67], off, off offset:16"]
    body = ["buffer_load_dwordx4 v[8:11], v20, s[4:7], 0 offen"]   # next tile's prefetch
    body += (reload if reloads_in_loop else []) + ["s_waitcnt vmcnt(0)", MFMA,
                                                    "v_add_f32 v61, v60, v64", MFMA]
    rows = pre + ([] if reloads_in_loop else reload + ["s_waitcnt vmcnt(0)"]) + body
    start = len(rows) - len(body)
    rows += ["s_add_u32 s0, s0, 1", "s_cmp_lt_u32 s0, 16", f"s_cbranch_scc1 -{len(body) + 2}", "s_endpgm"]
    return rows, [(start, len(rows) - 2, 16)]


def test_reloads_in_the_loop_are_item_one(tmp_path: Path) -> None:
    rows, loops = _loop_rows(True)
    data = planned(tmp_path, rows, loops=loops)
    first = next(i for i in data["plan"] if i["kind"] != "capture")
    assert first["id"] == "register-spill", [i["id"] for i in data["plan"]]
    reload_rows = {n + 1 for n, isa in enumerate(rows) if isa.startswith("scratch_load")}
    assert {r for s in first["sites"] for r in s["producer_rows"]} == reload_rows
    # independent target: the blame of the reloads' waits, reloads plus the VMEM loads they drain
    # (the spill stores before the loop, waited on once at the first iteration, are not counted)
    waits = [w for w in data["waits"] if any(p["line_number"] in reload_rows for p in w["producers"])]
    expected = sum(p["blamed_stall"] for w in waits for p in w["producers"]
                   if p["line_number"] in reload_rows or p["category"] == "vmem-load")
    assert abs(first["estimate"]["target_cycles"] - expected) <= len(waits)
    ev = {e["metric"]: e["value"] for e in first["evidence"]}
    assert ev["spilled_dwords_per_lane"] == 5  # offset 0 (1 dword) and 16..31 (4 dwords)
    assert ev["drained_vmem_rows"] == "#4"
    assert "VGPRs of the" in first["fix"]
    _invariants(data)


def test_reloads_outside_loops_are_not_a_spill_item(tmp_path: Path) -> None:
    rows, loops = _loop_rows(False)
    data = planned(tmp_path, rows, loops=loops)
    assert "register-spill" not in [i["id"] for i in data["plan"]]
    assert any(s["id"] == "register-spill" and "inside a loop" in s["reason"] for s in data["plan_skipped"])


def test_a_global_load_stored_straight_to_scratch_is_part_of_the_spill(tmp_path: Path) -> None:
    """The next tile is loaded, waited on, and stored to scratch at once (no register to keep it):
    that wait is the spill's, not a prefetch to move (load-in-mfma-loop must not claim it)."""
    body = ["buffer_load_dwordx4 v[8:11], v20, s[4:7], 0 offen", "s_waitcnt vmcnt(0)",
            "scratch_store_dwordx4 off, v[8:11], off offset:32",
            "scratch_load_dword v60, off, off offset:0", "s_waitcnt vmcnt(0)", MFMA, "v_add_f32 v61, v60, v60"]
    rows = ["s_mov_b32 s0, 0", "scratch_store_dword off, v60, off offset:0"] + body
    rows += ["s_add_u32 s0, s0, 1", "s_cmp_lt_u32 s0, 16", f"s_cbranch_scc1 -{len(body) + 2}", "s_endpgm"]
    data = planned(tmp_path, rows, loops=[(2, len(rows) - 2, 16)])
    item = next(i for i in data["plan"] if i["id"] == "register-spill")
    ev = {e["metric"]: e["value"] for e in item["evidence"]}
    assert ev["loads_staged_to_scratch"] == "#3"
    assert 3 in {r for s in item["sites"] for r in s["producer_rows"]}
    assert not any(i["id"] == "load-in-mfma-loop" and 3 in {r for s in i["sites"] for r in s["producer_rows"]}
                   for i in data["plan"])


def test_the_prefetch_a_reload_wait_drains_is_not_a_load_in_mfma_loop_item(tmp_path: Path) -> None:
    """vmcnt retires in order: the wait on the reload also waits for the older prefetch #4, which
    was issued a whole reload earlier. That pair is the spill's, not a prefetch to move."""
    rows, loops = _loop_rows(True)
    data = planned(tmp_path, rows, loops=loops)
    assert not any(i["id"] == "load-in-mfma-loop" for i in data["plan"]), [i["id"] for i in data["plan"]]
