"""The report's roofline: the work per instruction (hotspot/arch/flops.py), the point and ceilings
of corpus captures (hotspot/att/kernel_roofline.py) checked against numbers worked out by hand from
their code.json and the product table, and the picture (hotspot/render/html_roofline.py)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from hotspot.arch.flops import mfma_work, valu_work
from hotspot.att.kernel_roofline import GRID, PER_CU, Roofline, roofline_of
from hotspot.export.report_data import report_data
from hotspot.render.html_roofline import figure
from tests.conftest import corpus_path


@pytest.mark.parametrize("isa, kind, ops", [
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], 0", "f16", 2 * 32 * 32 * 8),
    ("v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]", "bf16", 2 * 16 * 16 * 32),
    # older syntax: the multi-block count is not written (2 blocks of 32x32x4, 16 of 4x4x1, 4 of 16x16x4)
    ("v_mfma_f32_32x32x4f16 a[0:31], v[0:1], v[2:3], 0", "f16", 2 * 32 * 32 * 4 * 2),
    ("v_mfma_f32_4x4x1f32 a[0:3], v0, v1, 0", "f32", 2 * 4 * 4 * 1 * 16),
    ("v_mfma_f32_16x16x4bf16_1k a[0:15], v[0:1], v[2:3], 0", "bf16", 2 * 16 * 16 * 4 * 4),
    ("v_mfma_f32_32x32x4_2b_f16 a[0:31], v[0:1], v[2:3], 0", "f16", 2 * 32 * 32 * 4 * 2),
    ("v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]", "f64", 2 * 16 * 16 * 4),
    ("v_mfma_f32_16x16x32_fp8_fp8 v[0:3], v[4:5], v[6:7], v[0:3]", "fp8", 2 * 16 * 16 * 32),
    ("v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]", "f8f6f4", 2 * 16 * 16 * 128),
])
def test_mfma_work(isa: str, kind: str, ops: int) -> None:
    work = mfma_work(isa)
    assert work is not None and (work.kind, work.ops, work.integer) == (kind, ops, False)


def test_integer_mfma_and_non_mfma() -> None:
    work = mfma_work("v_mfma_i32_16x16x32_i8 v[0:3], v[4:5], v[6:7], v[0:3]")
    assert work is not None and work.integer and work.ops == 2 * 16 * 16 * 32
    assert mfma_work("v_add_f32_e32 v0, v1, v2") is None


@pytest.mark.parametrize("isa, dtype, per_lane", [
    ("v_fmac_f32_e32 v0, v1, v2", "f32", 2), ("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", "f32", 4),
    ("v_mul_f32_e64 v0, v1, v2", "f32", 1), ("v_pk_add_f16 v0, v1, v2", "f16", 2),
    ("v_exp_f32_e32 v0, v1", "f32", 1), ("v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]", "f64", 2),
    ("v_rcp_iflag_f32_e32 v0, v1", "f32", 1),
])
def test_valu_work(isa: str, dtype: str, per_lane: int) -> None:
    assert valu_work(isa) == (dtype, per_lane)


@pytest.mark.parametrize("isa", ["v_add_u32_e32 v0, v1, v2", "v_cvt_f16_f32_e32 v0, v1", "v_mov_b32_e32 v0, v1",
                                 "v_cmp_lt_f32_e32 vcc, v0, v1", "v_max_f32_e32 v0, v1, v2"])
def test_valu_work_leaves_out_what_is_not_floating_point_arithmetic(isa: str) -> None:
    assert valu_work(isa) is None


def _code_rows(d: Path) -> list[tuple[str, int]]:
    doc = orjson.loads((d / "code.json").read_bytes())
    return [(row[0], row[6]) for row in doc["code"]]  # ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit


def _vmem_bytes(rows: list[tuple[str, int]]) -> int:
    width = {"dwordx4": 16, "dwordx2": 8, "dword": 4}
    total = 0
    for isa, hit in rows:
        m = re.match(r"(?:buffer|global)_(?:load|store)_(dwordx4|dwordx2|dword)\b", isa)
        if m:
            total += width[m.group(1)] * 64 * hit
    return total


def _roofline(d: Path) -> Roofline:
    view = report_data(d).data.dispatches[0]
    assert view.listing is not None
    return roofline_of(view.analysis, [(r.isa, r.hit) for r in view.listing])


@pytest.mark.parametrize("d", [corpus_path("att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_2")])
def test_whole_grid_point_and_ceilings_by_hand(corpus: Path, d: Path) -> None:
    """MI300X, a kernel trace with the dispatch's duration: the whole grid."""
    rows = _code_rows(d)
    mfma = sum(h for isa, h in rows if isa.startswith("v_mfma_f32_32x32x8_f16")) * 2 * 32 * 32 * 8
    valu = sum(h for isa, h in rows if isa.startswith(("v_mul_f32", "v_rcp_iflag_f32"))) * 1 * 64
    traced = len(list(d.glob("se*_sm*_sl*_wv*.json")))
    assert (mfma, valu, traced) == (1024 * 16384, 8 * 64, 4)
    r = _roofline(d)
    assert r.available and r.scope == GRID and r.waves == traced
    grid_waves, duration_ns = 1024, 24046  # the kernel trace's row of this dispatch
    assert r.flops_by_type == {"MFMA f16": mfma, "VALU f32": valu}
    assert r.flops == pytest.approx((mfma + valu) * grid_waves / traced)
    assert r.flops_per_s == pytest.approx((mfma + valu) * grid_waves / traced / (duration_ns * 1e-9))
    assert r.intensity == pytest.approx((mfma + valu) / _vmem_bytes(rows))
    got = {c.name: c.value for c in r.ceilings}
    # MI300X: 304 CUs at 2100 MHz; 2048 dense f16 FLOP and 256 vector FP32 FLOP per clock per CU; 5.3 TB/s
    assert got == pytest.approx({"MFMA f16": 2048 * 304 * 2.1e9, "VALU FP32": 256 * 304 * 2.1e9,
                                 "HBM": 5300e9})
    assert got["MFMA f16"] == pytest.approx(1307.4e12, rel=1e-3)  # HARDWARE.md §5


@pytest.mark.parametrize("d", [corpus_path("att", "gfx950", "flash_attn_replicates", "small",
                                           "ui_output_agent_14326_dispatch_44_after_loc_fix")])
def test_per_cu_point_and_ceilings_by_hand(corpus: Path, d: Path) -> None:
    """MI350X, no kernel-trace duration: one CU, from the traced SIMDs' time."""
    rows = _code_rows(d)
    mfma = sum(h for isa, h in rows if isa.startswith("v_mfma_f32_32x32x16_bf16")) * 2 * 32 * 32 * 16
    assert mfma and not any(isa.startswith("v_mfma") and not isa.startswith("v_mfma_f32_32x32x16_bf16")
                            for isa, h in rows if h)
    view = report_data(d).data.dispatches[0]
    r = roofline_of(view.analysis, [(x.isa, x.hit) for x in view.listing or []])
    span = view.analysis.ceilings.kernel.span_cycles  # Σ over the traced SIMDs (the wave pass)
    assert r.available and r.scope == PER_CU
    assert r.flops_by_type["MFMA bf16"] == mfma
    total = sum(r.flops_by_type.values())
    clock = 2200e6  # MI350X peak engine clock
    assert r.flops_per_s == pytest.approx(total * 4 / span * clock)  # 4 SIMDs per CU
    got = {c.name: c.value for c in r.ceilings}
    assert got == pytest.approx({"MFMA bf16": 4096 * clock, "VALU FP32": 256 * clock, "HBM": 8000e9 / 256})
    # every ceiling is drawn, and the point sits inside the plot area
    html = figure(r)
    assert html.count('class="ceiling"') == 3 and "roofline-point" in html
    x0, y0, x1, y1 = map(float, re.search(r'data-plot="([^"]+)"', html).group(1).split())
    cx, cy = (float(v) for v in re.search(r'cx="([\d.]+)" cy="([\d.]+)"', html).groups())
    assert x0 < cx < x1 and y0 < cy < y1
    assert "per CU" in html and "traced waves" in html


@pytest.mark.parametrize("d, reason", [
    (corpus_path("att", "gfx950", "mla_decode"), "no MFMA and no floating-point VALU instruction executed"),
    (corpus_path("att", "gfx942", "hipkittens_gemm_spill", "ui_output_agent_18224_dispatch_48"),
     "the GPU product is unknown"),
])
def test_no_point_says_why(corpus: Path, d: Path, reason: str) -> None:
    r = _roofline(d)
    assert not r.available and reason in r.reason
    html = figure(r)
    assert "<svg" not in html and "No roofline: " + reason in html


def test_unknown_mfma_work_gives_no_point() -> None:
    from hotspot.att.kernel_roofline import traced_flops

    by_type, unknown, integer = traced_flops([("v_mfma_f32_16x16x8_tf32 v[0:3]", 5),
                                              ("v_mfma_i32_16x16x32_i8 v[0:3]", 2),
                                              ("v_mfma_f32_16x16x16_f16 v[0:3]", 0)], 64)
    assert by_type == {} and unknown == ["v_mfma_f32_16x16x8_tf32"] and integer == ["i8"]
