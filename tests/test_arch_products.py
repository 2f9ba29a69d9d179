"""Product table (HARDWARE.md §5) and name matching."""

from __future__ import annotations

import pytest

from hotspot.arch.products import PRODUCTS, find_product, product_candidates
from hotspot.arch.targets import TARGETS, get_target


@pytest.mark.parametrize("name,expected", [
    ("AMD Instinct MI300X", "MI300X"),
    ("MI300X", "MI300X"),
    ("mi300x", "MI300X"),
    ("MI300X_A1", "MI300X"),
    ("AMD Instinct MI300A", "MI300A"),
    ("MI300A_A1", "MI300A"),
    ("AMD Instinct MI325X", "MI325X"),
    ("AMD Instinct MI350X", "MI350X"),
    ("MI355X", "MI355X"),
    ("AMD Instinct MI250X / MI250", "MI250X"),
    ("AMD Instinct MI210", "MI210"),
    ("MI100", "MI100"),
])
def test_find_product(name, expected):
    product = find_product(name)
    assert product is not None and product.name == expected


@pytest.mark.parametrize("name", ["MI300", "MI200", "MI350", "MI3000X", "AMD EPYC 9575F", "", "gfx942"])
def test_find_product_rejects_ambiguous_or_unknown(name):
    assert find_product(name) is None


def test_family_candidates():
    assert [p.name for p in product_candidates("MI200")] == ["MI250X", "MI210"]
    assert [p.name for p in product_candidates("MI350")] == ["MI350X", "MI355X"]
    assert [p.name for p in product_candidates("MI300X_A1")] == ["MI300X"]
    assert product_candidates("RX 9070") == ()


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_peaks_match_per_cu_rates(name):
    # §5: peak FLOPs = FLOPs/clk/CU × CUs × clock; the per-CU rate lives in the arch table.
    p = PRODUCTS[name]
    target = get_target(p.gfx)
    f16 = p.cus * target.dense_f16_flops_per_clk_per_cu * p.peak_engine_clock_mhz / 1e6
    assert p.dense_f16_tflops == pytest.approx(f16, abs=0.1)
    if p.dense_fp8_tflops is None:
        assert target.dense_fp8_flops_per_clk_per_cu is None
    else:
        fp8 = p.cus * target.dense_fp8_flops_per_clk_per_cu * p.peak_engine_clock_mhz / 1e6
        assert p.dense_fp8_tflops == pytest.approx(fp8, abs=0.1)


def test_pinned_values_and_unverified_marks():
    mi300x = PRODUCTS["MI300X"]
    assert (mi300x.gfx, mi300x.cus, mi300x.xcds, mi300x.peak_engine_clock_mhz) == ("gfx942", 304, 8, 2100)
    assert mi300x.peak_hbm_gbps == 5300.0
    assert not mi300x.unverified
    mi210 = PRODUCTS["MI210"]
    assert (mi210.gfx, mi210.cus, mi210.peak_engine_clock_mhz) == ("gfx90a", 104, 1700)
    assert mi210.peak_hbm_gbps == pytest.approx(1638.4)
    for name in ("MI325X", "MI350X", "MI355X"):
        p = PRODUCTS[name]
        assert "peak_hbm_gbps" in p.unverified
        assert "unverified" in p.source("peak_hbm_gbps")
    assert all(p.gfx in TARGETS for p in PRODUCTS.values())
    assert all(p.source("cus") for p in PRODUCTS.values())


def test_cus_per_se_is_cus_per_xcd_over_four_shader_engines():
    # AMD CDNA 3 / CDNA 4 whitepapers: 4 SEs per XCD; MI350X 32 CUs per XCD, MI300X 38 (9.5 per SE on average)
    assert PRODUCTS["MI350X"].cus_per_se == PRODUCTS["MI355X"].cus_per_se == 8
    assert PRODUCTS["MI300X"].cus_per_se == 9.5
    for p in PRODUCTS.values():
        if p.cus_per_se is not None:
            assert p.cus_per_se == p.cus / (p.xcds * 4)
            assert "whitepaper" in p.source("cus_per_se")
    assert PRODUCTS["MI250X"].cus_per_se is None  # CDNA2's SE structure is not in the table's sources
