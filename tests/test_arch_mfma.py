"""MFMA pass counts (HARDWARE.md §4), legacy shapes on gfx950, gfx950-only mnemonics (§2)."""

from __future__ import annotations

import pytest

from hotspot.arch.mfma import (
    exclusive_target,
    faster_shape,
    mfma_passes,
    parse_mfma,
)
from hotspot.arch.mfma_tables import GFX950_EXCLUSIVE_MNEMONICS as GFX950_ONLY_PATTERNS

GFX942_CASES = [
    ("v_mfma_f32_4x4x4_16b_f16", 2),
    ("v_mfma_f32_4x4x1_16b_f32", 2),
    ("v_mfma_f32_16x16x16_f16", 4),
    ("v_mfma_f32_16x16x16_bf16", 4),
    ("v_mfma_f32_16x16x16f16", 4),          # pre-LLVM-17 spelling
    ("v_mfma_f32_16x16x16bf16_1k", 4),      # gfx90a-era spelling of the same shape
    ("v_mfma_f32_16x16x32_fp8_fp8", 4),
    ("v_mfma_f32_16x16x32_bf8_fp8", 4),
    ("v_mfma_i32_16x16x32_i8", 4),
    ("v_mfma_f32_16x16x8_xf32", 4),
    ("v_mfma_f32_32x32x8_f16", 8),
    ("v_mfma_f32_32x32x8_bf16", 8),
    ("v_mfma_f32_32x32x16_fp8_fp8", 8),
    ("v_mfma_i32_32x32x16_i8", 8),
    ("v_mfma_f32_32x32x4_xf32", 8),
    ("v_mfma_f32_16x16x4_f32", 8),
    ("v_mfma_f32_32x32x2_f32", 16),
    ("v_mfma_f64_4x4x4_4b_f64", 4),
    ("v_mfma_f64_16x16x4_f64", 8),
]


@pytest.mark.parametrize("mnemonic,passes", GFX942_CASES)
def test_gfx942_passes(mnemonic, passes):
    assert mfma_passes(mnemonic, "gfx942") == passes


@pytest.mark.parametrize("mnemonic,passes", [
    ("v_mfma_f32_16x16x32_f16", 4), ("v_mfma_f32_16x16x32_bf16", 4),
    ("v_mfma_f32_32x32x16_f16", 8), ("v_mfma_f32_32x32x16_bf16", 8),
    ("v_mfma_i32_16x16x64_i8", 4), ("v_mfma_i32_32x32x32_i8", 8),
    ("v_mfma_f64_16x16x4_f64", 16),
    # old shapes keep their counts
    ("v_mfma_f32_16x16x16_f16", 4), ("v_mfma_f32_32x32x8_bf16", 8), ("v_mfma_f32_32x32x2_f32", 16),
])
def test_gfx950_passes(mnemonic, passes):
    assert mfma_passes(mnemonic, "gfx950") == passes


@pytest.mark.parametrize("line,passes", [
    ("v_mfma_f32_16x16x128_f8f6f4", 8),                                     # no modifiers: FP8
    ("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]", 8),
    ("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[12:15], v[0:3] cbsz:4 blgp:4", 4),   # FP4 x FP4
    ("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:15], v[0:3] cbsz:1 blgp:4", 8),  # BF8 x FP4
    ("v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:9], v[12:17], v[0:3], v20, v21 cbsz:2 blgp:3", 4),
    ("v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15]", 16),
    ("v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], v[24:27], v[0:15], v1, v2 cbsz:4 blgp:4", 8),
])
def test_f8f6f4_passes_depend_on_operand_formats(line, passes):
    assert mfma_passes(line, "gfx950") == passes


def test_unknown_or_unsupported_is_none():
    assert mfma_passes("v_mfma_f32_16x16x8_xf32", "gfx950") is None     # xf32 removed on gfx950
    assert mfma_passes("v_mfma_f32_16x16x128_f8f6f4", "gfx942") is None  # gfx950-only shape
    assert mfma_passes("v_mfma_f32_32x32x8_f16", "gfx90a") is None       # no table for gfx90a
    assert mfma_passes("v_add_f32 v0, v1, v2", "gfx942") is None
    assert mfma_passes("v_mfma_f32_32x32x4_2b_bf16", "gfx942") is None   # multi-block: not tabulated
    assert mfma_passes("", "gfx942") is None
    assert parse_mfma("v_mfmax") is None


@pytest.mark.parametrize("mnemonic,replacement", [
    ("v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x32_f16"),
    ("v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]", "v_mfma_f32_32x32x16_bf16"),
    ("v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_16x16x128_f8f6f4"),
    ("v_mfma_i32_32x32x16_i8", "v_mfma_i32_32x32x32_i8"),
])
def test_legacy_shapes_on_gfx950(mnemonic, replacement):
    assert faster_shape("gfx942", mnemonic) is None
    assert faster_shape("gfx950", mnemonic) == replacement
    # the replacement does twice the K in the same number of passes (or 4x K in 2x passes for fp8)
    old, new = parse_mfma(mnemonic), parse_mfma(replacement)
    rate_old = old.k / mfma_passes(mnemonic, "gfx950")
    rate_new = new.k / mfma_passes(replacement, "gfx950")
    assert rate_new == 2 * rate_old


@pytest.mark.parametrize("mnemonic", ["v_mfma_f32_16x16x32_f16", "v_mfma_f32_32x32x2_f32",
                                      "v_mfma_f64_16x16x4_f64", "v_add_f32"])
def test_not_legacy(mnemonic):
    assert faster_shape("gfx950", mnemonic) is None


@pytest.mark.parametrize("mnemonic", [
    "v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4",
    "v_mfma_f32_16x16x32_f16", "v_mfma_f32_16x16x32_bf16", "v_mfma_f32_32x32x16_f16",
    "v_mfma_f32_32x32x16_bf16", "v_mfma_i32_16x16x64_i8", "ds_read_b64_tr_b16 v[0:1], v2",
    "v_cvt_scalef32_pk_f32_fp8 v[0:1], v2, v3", "v_permlane16_swap_b32 v0, v1", "v_permlane32_swap_b32_e32 v0, v1",
])
def test_gfx950_only(mnemonic):
    assert exclusive_target(mnemonic) == "gfx950"


@pytest.mark.parametrize("mnemonic", [
    "v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x16_f16",
    "v_mfma_i32_16x16x32_i8", "ds_read_b64 v[0:1], v2", "v_permlane16_b32 v0, v1, s0, s1", "",
])
def test_not_gfx950_only(mnemonic):
    assert exclusive_target(mnemonic) is None


def test_patterns_are_data():
    assert isinstance(GFX950_ONLY_PATTERNS, tuple) and all(isinstance(p, str) for p in GFX950_ONLY_PATTERNS)
