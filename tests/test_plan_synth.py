"""End to end: synthetic dispatches built to show one pattern each -> `analyze --plan` -> the rule
fires at the row built for it, and stays silent on the same kernel built without the pattern."""

from __future__ import annotations

from pathlib import Path

import pytest

from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.plan.entry_point import analyze
from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch

SRC = "/work/synth/kernels/k.py"
MFMA_950 = "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]"
SMALL = Layout(ses=(0,), simds=2, slots=1, other_cus=())


def plan_of(tmp_path: Path, rows: list[str], loops=(), arch: str = "gfx950") -> list[dict]:
    program = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(rows)], loops)
    d = make_dispatch(tmp_path, DispatchSpec(arch=arch, program=program, waves=4, layout=SMALL,
                                             variants=4, agent_info=True), seed=3)
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert data["waits"] is not None, "wait attribution (issue 7) is needed for these tests"
    return data["plan"]


def at(plan: list[dict], rule_id: str) -> list[int]:
    return [i["location"]["line_number"] for i in plan if i["id"] == rule_id]


def row(rows: list[str], text: str) -> int:
    """code.json line number of the first row starting with `text` (rows are 1-based after the
    kernel pseudo row, so row index i is line number i + 1)."""
    return next(i for i, r in enumerate(rows) if r.startswith(text)) + 1


def test_load_in_mfma_loop(tmp_path: Path) -> None:
    with_load = ["s_mov_b32 s0, 0",
                 "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen",
                 "s_waitcnt vmcnt(0)",
                 MFMA_950, MFMA_950,
                 "s_cbranch_scc1 1",
                 "s_endpgm"]
    plan = plan_of(tmp_path / "a", with_load, loops=[(1, 5, 12)])
    assert at(plan, "load-in-mfma-loop") == [row(with_load, "buffer_load")]
    without = [r for r in with_load if not r.startswith(("buffer_load", "s_waitcnt"))]
    assert not at(plan_of(tmp_path / "b", without, loops=[(1, 3, 12)]), "load-in-mfma-loop")


def test_back_to_back_loads(tmp_path: Path) -> None:
    rows = ["buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen",
            "buffer_load_dwordx4 v[4:7], v9, s[4:7], 0 offen",
            "s_waitcnt vmcnt(0)",
            "v_add_f32 v0, v0, v4",
            "s_endpgm"]
    assert at(plan_of(tmp_path / "a", rows), "back-to-back-loads") == [1]
    single = [rows[0], rows[2], rows[3], rows[4]]
    assert not at(plan_of(tmp_path / "b", single), "back-to-back-loads")


def test_lds_read_before_mfma(tmp_path: Path) -> None:
    rows = ["ds_read_b128 v[0:3], v10", "s_waitcnt lgkmcnt(0)", MFMA_950, "s_endpgm"]
    assert at(plan_of(tmp_path / "a", rows), "lds-read-before-mfma") == [1]
    valu = ["ds_read_b128 v[0:3], v10", "s_waitcnt lgkmcnt(0)", "v_add_f32 v0, v0, v1", "s_endpgm"]
    plan = plan_of(tmp_path / "b", valu)
    assert not at(plan, "lds-read-before-mfma")
    assert at(plan, "short-load-distance") == [1]


def test_scale_load_too_close(tmp_path: Path) -> None:
    rows = ["s_waitcnt lgkmcnt(0)", "v_add_u32 v1, v1, v2",
            "s_load_dword s8, s[0:1], 0x40", "s_waitcnt lgkmcnt(0)", "v_mul_f32 v3, s8, v3",
            "s_endpgm"]
    plan = plan_of(tmp_path / "a", rows)
    items = [i for i in plan if i["id"] == "kernarg-loads"]  # an s_load outside loops: a kernel argument
    assert [i["location"]["line_number"] for i in items] == [3]
    assert "#3" in items[0]["fix"]  # issued after the first wait: hoist it to the entry batch
    assert not at(plan_of(tmp_path / "b", ["v_add_u32 v1, v1, v2", "v_mul_f32 v3, s8, v3", "s_endpgm"]),
                  "kernarg-loads")


def test_lgkm_cross_lane(tmp_path: Path) -> None:
    rows = ["ds_bpermute_b32 v1, v2, v3", "s_waitcnt lgkmcnt(0)", "v_add_f32 v0, v0, v1",
            "ds_bpermute_b32 v1, v2, v0", "s_waitcnt lgkmcnt(0)", "v_add_f32 v0, v0, v1", "s_endpgm"]
    assert at(plan_of(tmp_path / "a", rows), "lgkm-cross-lane")[0] in (1, 4)
    lds = [r.replace("ds_bpermute_b32 v1, v2,", "ds_read_b32 v1,") for r in rows]
    assert not at(plan_of(tmp_path / "b", lds), "lgkm-cross-lane")


@pytest.mark.parametrize("op,fires", [("v_mfma_f32_32x32x8_f16", True), ("v_mfma_f32_32x32x16_f16", False)])
def test_legacy_mfma_shape(tmp_path: Path, op: str, fires: bool) -> None:
    rows = ["s_mov_b32 s0, 0", f"{op} a[0:15], v[0:1], v[2:3], a[0:15]",
            f"{op} a[16:31], v[4:5], v[6:7], a[16:31]", "s_cbranch_scc1 1", "s_endpgm"]
    got = at(plan_of(tmp_path, rows, loops=[(1, 3, 20)]), "legacy-mfma-shape")
    # one item per legacy mnemonic, located at one of its (equally executed) rows
    assert (len(got) == 1 and got[0] in (2, 3)) if fires else got == []
