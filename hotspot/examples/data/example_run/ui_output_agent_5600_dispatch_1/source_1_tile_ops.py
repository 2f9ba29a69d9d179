"""Tile building blocks used by gemm_bf16.py: workgroup coordinates, buffer descriptors, LDS tiles,
MFMA fragments and the epilogue. Each function lowers to a short, fixed instruction sequence; the
comments name the instructions a reader of the ISA view will find on that line.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernel_dsl import ir  # the code generator behind these helpers

LANES = 64          # threads per wave on CDNA
VEC_BYTES = 16      # one buffer_load_dwordx4 / ds_write_b128 moves 16 bytes per lane
MFMA_M = 16
MFMA_N = 16
MFMA_K = 32


@dataclass(frozen=True)
class BufferDesc:
    """A 128-bit buffer resource: base address, byte size and row stride of a 2-D array."""

    base: ir.Value
    num_bytes: ir.Value
    stride: ir.Value

    def load_tile(self, row: ir.Value, col: ir.Value, rows: int, cols: int) -> ir.Value:
        """rows x cols bf16 elements starting at (row, col): each lane loads VEC_BYTES per row step."""
        per_lane = rows * cols * 2 // (LANES * VEC_BYTES)
        offsets = lane_offsets(row, col, self.stride, per_lane)
        return ir.buffer_load(self, offsets, width=VEC_BYTES)


def lane_offsets(row: ir.Value, col: ir.Value, stride: ir.Value, count: int) -> list[ir.Value]:
    lane = ir.lane_id()
    return [(row + lane // 8 + i * (LANES // 8)) * stride + (col + lane % 8 * 8) * 2
            for i in range(count)]


def tile_origin(block_m: int, block_n: int) -> tuple[ir.Value, ir.Value]:
    """The first row and column of this workgroup's output tile (row-major over the grid)."""
    wg = ir.workgroup_id(0)
    tiles_n = ir.kernel_arg("n") // block_n
    row0, col0 = (wg // tiles_n) * block_m, (wg % tiles_n) * block_n
    return ir.clamp(row0, 0, ir.kernel_arg("m") - block_m), col0


class LdsTile:
    """A tile in LDS, padded by one vector per row so that column reads do not conflict."""

    def __init__(self, shape: tuple[int, int], dtype: str) -> None:
        self.rows, self.cols = shape
        self.dtype = dtype
        self.pitch = self.cols * 2 + VEC_BYTES
        self.buf = ir.lds_alloc(self.rows * self.pitch)

    def store(self, value: ir.Value) -> None:
        lane = ir.lane_id()
        ir.ds_write(self.buf, lane // 8 * self.pitch + lane % 8 * VEC_BYTES, value, width=VEC_BYTES)

    def fragment(self, row: int, k: int) -> ir.Value:
        lane = ir.lane_id()
        return ir.ds_read(self.buf, (row + lane % MFMA_M) * self.pitch + (k + lane // MFMA_M * 8) * 2,
                          width=VEC_BYTES)


def barrier() -> None:
    """Every wave of the workgroup reaches this point before any continues (s_barrier)."""
    ir.s_barrier()


def load_fragments(a: LdsTile, b: LdsTile, wave_rows: int) -> tuple[list[ir.Value], list[ir.Value]]:
    """The MFMA operands of this wave: wave_rows of A and all of B, MFMA_K deep per read."""
    row0 = ir.wave_id() * wave_rows
    a_frag = [a.fragment(row0 + i * MFMA_M, k) for i in range(wave_rows // MFMA_M)
              for k in range(0, a.cols, MFMA_K)]
    b_frag = [b.fragment(j * MFMA_N, k) for j in range(2) for k in range(0, b.rows, MFMA_K)]
    return a_frag, b_frag


class Accumulator:
    """fp32 accumulators held in AGPRs, one 16x16 block per (row block, column block)."""

    def __init__(self, shape: tuple[int, int], dtype: str) -> None:
        self.blocks = [[ir.zeros(MFMA_M * MFMA_N // LANES, dtype) for _ in range(shape[1] // MFMA_N)]
                       for _ in range(shape[0] // MFMA_M)]

    def to(self, dtype: str) -> list[ir.Value]:
        """Convert every accumulator (fp32 -> dtype with round-to-nearest-even), blockwise."""
        # The bias is a kernel argument: one scalar load for the whole tile, added before the
        # conversion so that the rounding happens once.
        out = []
        for row in self.blocks:
            out += [ir.convert(ir.add(v, ir.kernel_arg("bias")), dtype) for v in row]
        return out


def mfma_16x16x32_bf16(a_frag: list[ir.Value], b_frag: list[ir.Value], acc: Accumulator
                       ) -> Accumulator:
    """acc[i][j] += A_i @ B_j over every fragment pair (v_mfma_f32_16x16x32_bf16)."""
    for i, a in enumerate(a_frag[:len(acc.blocks)]):
        for j, b in enumerate(b_frag[:len(acc.blocks[i])]):
            acc.blocks[i][j] = ir.mfma("v_mfma_f32_16x16x32_bf16", a, b, acc.blocks[i][j])
    return acc


def reduce_lanes(acc: Accumulator, swizzle: bool) -> Accumulator:
    """Exchange rows across lanes (ds_bpermute_b32) so that the epilogue writes whole vectors."""
    if not swizzle:
        return acc
    lane = ir.lane_id()
    src = (lane ^ (lane // MFMA_M & 1) * 8) * 4
    acc.blocks = [[ir.ds_bpermute(src, v) for v in row] for row in acc.blocks]
    return acc


def store_tile(c: BufferDesc, row0: ir.Value, col0: ir.Value, values: list[ir.Value]) -> None:
    """Write the converted tile: one buffer_store_dwordx4 per lane and 16-row step."""
    offsets = lane_offsets(row0, col0, c.stride, len(values))
    for off, v in zip(offsets, values):
        ir.buffer_store(c, off, v, width=VEC_BYTES)


def scaled_store_tile(c: BufferDesc, row0: ir.Value, col0: ir.Value, values: list[ir.Value],
                      scale: ir.Value) -> None:
    """store_tile with a per-tensor scale folded into the conversion (fp8 outputs)."""
    store_tile(c, row0, col0, [ir.fma(v, scale, ir.zeros(1, "f32")) for v in values])


def make_desc(base: ir.Value, rows: ir.Value, cols: ir.Value) -> BufferDesc:
    """A descriptor for a row-major bf16 array; the size clamps out-of-range loads to zero."""
    stride = cols * 2
    return BufferDesc(base, rows * stride, stride)


def epilogue_bias(values: list[ir.Value], bias: ir.Value) -> list[ir.Value]:
    return [ir.add(v, bias) for v in values]


def fused_epilogue(values: list[ir.Value], scale: ir.Value, bias: ir.Value) -> list[ir.Value]:
    """relu(v * scale + bias) converted to bf16: one v_fma, one v_max and one conversion each."""
    zero = ir.zeros(1, "f32")
    # scale and bias come from kernel arguments: scalar loads and moves ahead of the vector work
    return [ir.convert(ir.max(ir.fma(v, scale, bias), zero), "bf16") for v in values]
