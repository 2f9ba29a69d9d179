"""grid-underfill measured from occupancy.json when no launch row gives the grid: one round of
workgroups on fewer CUs per traced shader engine than the product has. Expected numbers are worked
out here by hand from the layouts and the product table's source (MI350X: 32 CUs per XCD, 4 SEs)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hotspot.arch.achieved import achieved_from_columns
from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.capture.occupancy_json import read_occupancy_json
from hotspot.plan.entry_point import analyze
from tests.plan_data import plan_of
from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch
from tests.conftest import corpus_path
from tests.test_plan_causes import launch
from tests.test_plan_rules import ids, item, occ_data, skipped

SRC = "/work/synth/kernels/k.py"
# a loop of 4 trips holds the wave's time: the work a split would spread (with the grid unknown the
# capture must show it)
ROWS = ["buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "s_waitcnt vmcnt(0)", "v_add_f32 v4, v0, v1",
        "s_cbranch_scc1 0", "s_endpgm"]
LOOPS = [(0, 3, 4)]
MI350X_CUS_PER_SE = 32 // 4
# 2 traced SEs, 4 CUs each (the traced CU 1 and CUs 0, 2, 3), one wave slot per SIMD
HALF = Layout(ses=(0, 1), simds=4, slots=1, cu=1, other_cus=(0, 2, 3))
ONE_ROUND_WAVES = len(HALF.ses) * HALF.simds * HALF.slots  # every slot runs one wave


def planned(tmp_path: Path, waves: int) -> dict:
    program = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(ROWS)], LOOPS)
    d = make_dispatch(tmp_path / "run" / "out", DispatchSpec(arch="gfx950", program=program, waves=waves,
                                                             layout=HALF, variants=4, agent_info=True), seed=3)
    return analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()


def test_one_round_on_half_the_cus_is_grid_underfill(tmp_path: Path) -> None:
    data = planned(tmp_path, ONE_ROUND_WAVES)
    assert data["occupancy"]["launch"] is None  # no kernel trace: the grid is unknown
    achieved = data["occupancy"]["achieved"]
    busy_per_se = 1 + len(HALF.other_cus)
    assert achieved["busy_cus_per_se"] == {str(se): busy_per_se for se in HALF.ses}
    assert achieved["one_round"] is True
    it = next(i for i in data["plan"] if i["id"] == "grid-underfill")
    idle = 1 - len(HALF.ses) * busy_per_se / (len(HALF.ses) * MI350X_CUS_PER_SE)
    assert idle == 0.5
    # the bound is the idle share of the loop's time: rows outside the loop (here s_endpgm, which
    # lasts until memory drains) are a fixed cost per workgroup that a split does not shrink
    loop_rows = range(LOOPS[0][0] + 1, LOOPS[0][1] + 2)  # 1-based code rows of the loop
    fixed = sum(i["latency"] for i in data["instructions"] if i["line_number"] not in loop_rows)
    kept = 1 - fixed / data["totals"]["latency"]
    assert 0 < kept < 1
    assert it["estimate"]["high_pct"] == pytest.approx(100 * idle * kept, abs=0.01)
    assert it["estimate"]["low_pct"] == pytest.approx(50 * idle * kept, abs=0.01)
    assert "measured on the traced shader engines" in it["title"]
    ev = {e["metric"]: e["value"] for e in it["evidence"]}
    assert ev["traced_shader_engines"] == 2 and ev["busy_cus_on_traced_ses"] == 8
    assert "occupancy.json on 2 traced shader engines" in ev["launch_source"]


def test_a_second_round_on_the_same_cus_is_not_underfill(tmp_path: Path) -> None:
    data = planned(tmp_path, 2 * ONE_ROUND_WAVES)  # every slot runs a second wave after its first
    achieved = data["occupancy"]["achieved"]
    assert achieved["busy_cus_per_se"] == {str(se): 1 + len(HALF.other_cus) for se in HALF.ses}
    assert achieved["one_round"] is False
    assert "grid-underfill" not in [i["id"] for i in data["plan"]]
    why = [s["reason"] for s in data["plan_skipped"] if s["id"] == "grid-underfill"]
    assert why and "more than one round" in why[0]


def _capture(busy: dict[str, int], one_round: bool | None = True, peak: int = 1, product: str = "MI350X",
             waves: int = 2) -> dict:
    data = occ_data("vgpr", waves=waves)
    data["arch"]["product"] = f"AMD Instinct {product}"
    data["occupancy"]["achieved"] = {"mean_waves_per_simd": 0.5, "peak_waves_per_simd": peak,
                                     "busy_cus_per_se": busy, "one_round": one_round}
    data["loops"] = [{"first_line_number": 1, "last_line_number": 2, "iterations_per_wave": 4.0,
                      "share": 0.9}]  # repeated work a split can spread
    return data


def _loop_share(data: dict) -> float:
    """The share of the waves' cycles inside the loop (1 minus the fixed per-workgroup share)."""
    lo, hi = data["loops"][0]["first_line_number"], data["loops"][0]["last_line_number"]
    inside = sum(i["latency"] for i in data["instructions"] if lo <= i["line_number"] <= hi)
    return inside / sum(i["latency"] for i in data["instructions"])


def test_capture_underfill_bounds_and_guards() -> None:
    data = _capture({"0": 4, "1": 4, "2": 4, "3": 4})
    it = item(plan_of(data), "grid-underfill")
    kept = _loop_share(data)
    assert it.estimate.high_pct == pytest.approx(50.0 * kept, abs=0.01)
    assert it.estimate.low_pct == pytest.approx(25.0 * kept, abs=0.01)
    # busy CUs at the kernel's occupancy limit: idle CUs may not have been this kernel's to use
    full = plan_of(_capture({"0": 4}, peak=2))
    assert "grid-underfill" not in ids(full)
    assert any("cannot tell" in s.reason for s in skipped(full, "grid-underfill"))
    # every CU of the SE busy; a run whose rounds are unknown
    assert "grid-underfill" not in ids(plan_of(_capture({"0": 8, "1": 8})))
    assert "grid-underfill" not in ids(plan_of(_capture({"0": 4}, one_round=None)))
    # MI300X: 9.5 CUs per SE on average (9 or 10): 9 busy could be a full SE, 4 busy is underfill
    assert "grid-underfill" not in ids(plan_of(_capture({"0": 9}, product="MI300X")))
    data = _capture({"0": 4, "1": 5}, product="MI300X")
    it = item(plan_of(data), "grid-underfill")
    assert it.estimate.high_pct == pytest.approx(100 * (1 - 9 / 19) * _loop_share(data), abs=0.01)


def test_a_matched_launch_row_wins_over_the_capture() -> None:
    data = _capture({"0": 4, "1": 4, "2": 4, "3": 4})
    data["occupancy"]["launch"] = launch(300)  # more workgroups than CUs: every CU gets work
    out = plan_of(data)
    assert "grid-underfill" not in ids(out)
    assert any("every CU gets work" in s.reason for s in skipped(out, "grid-underfill"))


SMALL_FA = "att/gfx950/flash_attn_replicates/small/ui_output_agent_14326_dispatch_44_after_loc_fix"


def test_small_flash_attention_capture_counts_its_busy_cus(corpus) -> None:
    """Read occupancy.json's rows directly: distinct CUs with a start per SE, and no start at or
    after the SE's first end."""
    d = corpus_path(SMALL_FA)
    doc = orjson.loads((d / "occupancy.json").read_bytes())
    kernel = next(int(k) for k, n in doc["dispatches"].items() if n.startswith("flash_attn"))
    expected_busy, expected_round = {}, True
    for se, rows in doc.items():
        if not se.isdigit():
            continue
        mine = [r for r in rows if r[5] == kernel]
        expected_busy[int(se)] = len({r[1] for r in mine if r[4] == 1})
        first_end = min(r[0] for r in mine if r[4] == 0)
        expected_round &= all(r[0] < first_end for r in mine if r[4] == 1)
    got = achieved_from_columns(read_occupancy_json(d / "occupancy.json").columns_by_se, [kernel])
    assert got.busy_cus_per_se == expected_busy == {0: 4, 1: 4, 2: 4, 3: 4}
    assert got.one_round is expected_round is True


def test_a_straight_line_wave_gives_no_capture_underfill() -> None:
    """With the grid unknown, one fixed-cost pass per wave (no repeated loop holding the time) is
    no evidence that a split would spread anything."""
    data = _capture({"0": 4, "1": 4, "2": 4, "3": 4})
    data["loops"] = [{"first_line_number": 1, "last_line_number": 2, "iterations_per_wave": 1.0, "share": 0.9}]
    out = plan_of(data)
    assert "grid-underfill" not in ids(out)
    assert any("no loop" in s.reason for s in skipped(out, "grid-underfill"))


def test_a_row_matched_by_name_that_the_occupancy_contradicts_is_not_the_launch() -> None:
    from hotspot.att.launch_match import (BY_DISPATCH_ID, BY_UNIQUE_SHAPE, INCONSISTENT, MATCHED, LaunchOut,
                                    checked_against_occupancy)

    row = LaunchOut([507 * 256, 1, 1], [256, 1, 1], 507, 48_000, 256, "kt.csv", 8000.0, MATCHED,
                    BY_UNIQUE_SHAPE)
    busy = {"0": 3, "1": 2, "2": 2, "3": 2}  # 9 of the 4 x 8 CUs, one round
    out = checked_against_occupancy(row, busy, True, 8.0)
    assert out.status == INCONSISTENT and "9 of at least 32 CUs" in out.reason
    # the dispatch's own row, a second round, or every CU busy: the row stands
    from dataclasses import replace
    assert checked_against_occupancy(replace(row, match=BY_DISPATCH_ID), busy, True, 8.0).status == MATCHED
    assert checked_against_occupancy(row, busy, False, 8.0).status == MATCHED
    assert checked_against_occupancy(row, {str(se): 8 for se in range(4)}, True, 8.0).status == MATCHED


def test_a_name_only_row_is_checked_against_the_captures_own_workgroup_count() -> None:
    """507 workgroups of 4 waves by name only; the capture ran in one round with 196 wave starts
    on the 4 SEs of one XCD (49 workgroups) -> about 392 over the 32 SEs of an MI300X (8 XCDs x 4):
    off by 115, more than max(15% of 392, 1 per SE = 32) -> refused. A row of 400 stands."""
    from dataclasses import replace

    from hotspot.att.launch_match import (BY_DISPATCH_ID, BY_UNIQUE_SHAPE, CAPTURE_GRID_TOLERANCE, INCONSISTENT,
                                    MATCHED, LaunchOut, checked_against_capture_grid)

    row = LaunchOut([507 * 256, 1, 1], [256, 1, 1], 507, 30_000, 304, "kt.csv", 5300.0, MATCHED,
                    BY_UNIQUE_SHAPE)
    out = checked_against_capture_grid(row, 196, 4, 32, 64, True)
    assert out.status == INCONSISTENT and "about 392" in out.reason
    assert all(reason for _, reason in CAPTURE_GRID_TOLERANCE.values())
    near = replace(row, grid=[400 * 256, 1, 1], workgroups=400)
    assert checked_against_capture_grid(near, 196, 4, 32, 64, True).status == MATCHED
    # the dispatch's own row, or a capture that took more than one round: no check
    assert checked_against_capture_grid(replace(row, match=BY_DISPATCH_ID), 196, 4, 32, 64, True).status == MATCHED
    assert checked_against_capture_grid(row, 196, 4, 32, 64, False).status == MATCHED
