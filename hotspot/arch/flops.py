"""Floating-point work per instruction and the VALU's peak rate, for the roofline (the report's
picture, hotspot/att/roofline.py).

- MFMA: one execution (one wave) does 2·M·N·K·blocks operations of its input type. The block
  count is the mnemonic's `_Nb_` when written, else what the A operand holds: the 64 lanes carry
  M·K·blocks A elements, `A_PER_LANE` each (older mnemonics leave a multi-block count unwritten:
  `v_mfma_f32_32x32x4f16` is 2 blocks of 32x32x4, `v_mfma_f32_4x4x1f32` 16 blocks). Integer MFMAs
  (i8) do integer operations, not FLOPs.
- VALU: FLOPs per lane by opcode in rocprof-compute's roofline convention (its VALU FLOP counters
  SQ_INSTS_VALU_{ADD,MUL,TRANS,FMA}_F16/F32/F64: FMA 2, add/sub/mul/transcendental 1 per lane),
  packed `v_pk_*` ops twice that. The trace has no EXEC mask, so every lane of the wave counts.
- The VALU's peak FP32 FLOPs per clock per CU, per target, from the products' published vector
  FP32 peaks (the MFMA peaks are in targets.py, derived the same way from HARDWARE.md §5).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hotspot.arch.classify import mnemonic_of
from hotspot.arch.mfma import parse_mfma

# A elements each lane holds, per MFMA input type (CDNA ISA guides, MFMA operand widths: f16 as
# 4 halves in 64 bits, bf16 2 in 32 bits (the gfx90a `_1k` forms 4), f32/f64 one, xf32 2, i8 4 in
# 32 bits, fp8 8 in 64 bits). The shapes that read wider operands (gfx950 double-K) are one block.
A_PER_LANE: dict[str, int] = {"f16": 4, "bf16": 2, "f32": 1, "xf32": 2, "f64": 1, "i8": 4, "fp8": 8,
                              "f8f6f4": 32}
A_PER_LANE_BF16_1K = 4
MFMA_LANES = 64  # an MFMA always runs the whole wave64 (EXEC does not mask it)
FLOPS_PER_MAC = 2
INTEGER_KINDS = frozenset({"i8"})


class MfmaWork(NamedTuple):
    kind: str    # input type: f16, bf16, fp8, f8f6f4, xf32, f32, f64, i8 (+ " sparse" for smfmac)
    ops: int     # operations per execution (2·M·N·K·blocks)
    integer: bool


def mfma_work(isa: str) -> MfmaWork | None:
    """What one execution of an MFMA does, or None when the line is not an MFMA hotspot parses."""
    shape = parse_mfma(isa)
    if shape is None:
        return None
    token = mnemonic_of(isa)
    if shape.blocks != 1 or "_1b_" in token:
        blocks = shape.blocks
    else:
        per_lane = A_PER_LANE_BF16_1K if token.endswith("_1k") else A_PER_LANE[shape.kind]
        blocks = max(1, MFMA_LANES * per_lane // (shape.m * shape.k))
    kind = shape.kind + (" sparse" if shape.sparse else "")
    return MfmaWork(kind, FLOPS_PER_MAC * shape.m * shape.n * shape.k * blocks,
                    shape.kind in INTEGER_KINDS)


# VALU opcodes that count as floating-point work, FLOPs per lane (rocprof-compute convention above).
VALU_FLOPS_PER_LANE: dict[str, int] = {
    **{op: 2 for op in ("fma", "fmac", "mad", "mac", "fmaak", "fmamk", "madak", "madmk", "fma_legacy",
                        "mad_legacy", "mac_legacy", "fmac_legacy", "fma_mix", "mad_mix", "fma_mixlo",
                        "fma_mixhi", "mad_mixlo", "mad_mixhi")},
    **{op: 1 for op in ("add", "sub", "subrev", "mul", "mul_legacy", "exp", "log", "rcp", "rsq",
                        "sqrt", "sin", "cos", "exp_legacy", "log_legacy", "rcp_iflag")},
}
PACKED_FACTOR = 2
_VALU = re.compile(r"^v_(?P<pk>pk_)?(?P<op>[a-z0-9_]+?)_(?P<ty>f16|bf16|f32|f64)"
                   r"(?:_(?:e32|e64|dpp|sdwa|e64_dpp))?$")


class ValuWork(NamedTuple):
    dtype: str            # f16, bf16, f32 or f64
    flops_per_lane: int


def valu_work(isa: str) -> ValuWork | None:
    """FLOPs per lane of one VALU instruction, or None when it is not floating-point work."""
    token = mnemonic_of(isa)
    m = _VALU.match(token)
    if m is None:
        return None
    per_lane = VALU_FLOPS_PER_LANE.get(m["op"])
    if per_lane is None:
        return None
    return ValuWork(m["ty"], per_lane * (PACKED_FACTOR if m["pk"] else 1))


class Rate(NamedTuple):
    value: int
    source: str


# Peak vector FP32 FLOPs per clock per CU = the product's published vector FP32 peak ÷ (CUs ×
# clock) (HARDWARE.md §5 gives CUs and clocks). Packed FP32 (v_pk_fma_f32, gfx90a on) doubles the
# FMA rate of the 4 SIMDs × 16 lanes.
VALU_FP32_FLOPS_PER_CLK_PER_CU: dict[str, Rate] = {
    "gfx908": Rate(128, "AMD MI100 spec sheet: 23.1 TFLOP/s FP32 vector = 120 CUs × 1.502 GHz × 128"),
    "gfx90a": Rate(256, "AMD MI250X spec sheet: 95.7 TFLOP/s packed FP32 = 220 CUs × 1.7 GHz × 256"),
    "gfx942": Rate(256, "AMD MI300X spec sheet: 163.4 TFLOP/s FP32 vector = 304 CUs × 2.1 GHz × 256"),
    "gfx950": Rate(256, "AMD MI355X spec sheet: 157.3 TFLOP/s FP32 vector = 256 CUs × 2.4 GHz × 256"),
}
