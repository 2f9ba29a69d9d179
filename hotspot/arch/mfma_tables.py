"""MFMA facts per target as data (HARDWARE.md §2 and §4): pass counts, the gfx950 f8f6f4 shapes, the
faster gfx950 shape for each gfx942-era shape, and the mnemonics only one target has. The ArchTarget
entries in targets.py point at these tables; the logic over them is mfma.py."""

from __future__ import annotations

# (m, n, k, kind) -> passes for single-block dense MFMA; HARDWARE.md §4.
GFX942_PASSES: dict[tuple[int, int, int, str], int] = {
    (16, 16, 16, "f16"): 4, (16, 16, 16, "bf16"): 4,
    (16, 16, 32, "fp8"): 4, (16, 16, 32, "i8"): 4,
    (16, 16, 8, "xf32"): 4,
    (32, 32, 8, "f16"): 8, (32, 32, 8, "bf16"): 8,
    (32, 32, 16, "fp8"): 8, (32, 32, 16, "i8"): 8,
    (32, 32, 4, "xf32"): 8,
    (16, 16, 4, "f32"): 8,
    (32, 32, 2, "f32"): 16,
    (4, 4, 4, "f64"): 4,
    (16, 16, 4, "f64"): 8,
}
FOUR_BY_FOUR_PASSES = 2  # §4: "4x4 variants 2 passes" (except f64 4x4x4, tabulated above)

# gfx950: gfx942 shapes keep their counts, xf32 is removed, f64 16x16x4 doubles, new shapes added.
GFX950_PASSES: dict[tuple[int, int, int, str], int] = {
    **{key: p for key, p in GFX942_PASSES.items() if key[3] != "xf32"},
    (16, 16, 4, "f64"): 16,
    (16, 16, 32, "f16"): 4, (16, 16, 32, "bf16"): 4,
    (32, 32, 16, "f16"): 8, (32, 32, 16, "bf16"): 8,
    (16, 16, 64, "i8"): 4,
    (32, 32, 32, "i8"): 8,
}
# f8f6f4 shapes: (passes if either operand is FP8/BF8, passes otherwise); §4.
GFX950_F8F6F4_PASSES: dict[tuple[int, int, int], tuple[int, int]] = {
    (16, 16, 128): (8, 4),
    (32, 32, 64): (16, 8),
}


# gfx942 shape -> the gfx950 shape doing twice the work in the same passes (§4: old shapes run at
# half of peak on gfx950).
GFX950_REPLACEMENTS: dict[tuple[int, int, int, str], str] = {
    (16, 16, 16, "f16"): "v_mfma_f32_16x16x32_f16",
    (16, 16, 16, "bf16"): "v_mfma_f32_16x16x32_bf16",
    (32, 32, 8, "f16"): "v_mfma_f32_32x32x16_f16",
    (32, 32, 8, "bf16"): "v_mfma_f32_32x32x16_bf16",
    (16, 16, 32, "i8"): "v_mfma_i32_16x16x64_i8",
    (32, 32, 16, "i8"): "v_mfma_i32_32x32x32_i8",
    (16, 16, 32, "fp8"): "v_mfma_f32_16x16x128_f8f6f4",
    (32, 32, 16, "fp8"): "v_mfma_f32_32x32x64_f8f6f4",
}


# Mnemonics only gfx950 has (HARDWARE.md §2, plus the §4 additions). Regexes, full-match against the
# lower-case mnemonic. Their absence does NOT prove gfx942.
GFX950_EXCLUSIVE_MNEMONICS: tuple[str, ...] = (
    r"v_mfma_scale_f32_\w+",
    r"v_mfma_f32_16x16x128_f8f6f4",
    r"v_mfma_f32_32x32x64_f8f6f4",
    r"v_mfma_f32_16x16x32_(?:f16|bf16)",
    r"v_mfma_f32_32x32x16_(?:f16|bf16)",
    r"v_mfma_i32_16x16x64_i8",
    r"v_mfma_i32_32x32x32_i8",          # §4 "gfx950 adds"
    r"ds_read_b64_tr_b16",
    r"v_cvt_scalef32_\w+",
    r"v_permlane(?:16|32)_swap(?:_b32)?(?:_e32|_e64)?",
)
