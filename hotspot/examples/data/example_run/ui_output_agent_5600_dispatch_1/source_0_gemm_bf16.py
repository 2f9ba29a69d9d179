"""C = A @ B for bf16 inputs on gfx950, one 128x128 output tile per workgroup.

Each workgroup walks K in steps of BLOCK_K: the A and B tiles are read from global memory with
128-bit buffer loads, staged in LDS, read back as MFMA fragments and accumulated in fp32 by
v_mfma_f32_16x16x32_bf16. The epilogue converts the accumulators and writes C.
The bundled example capture (`hotspot analyze --example`) maps its ISA back to these lines.
"""

from tile_ops import (
    Accumulator,
    BufferDesc,
    LdsTile,
    barrier,
    load_fragments,
    mfma_16x16x32_bf16,
    reduce_lanes,
    store_tile,
    tile_origin,
)

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 64
WAVES = 4


def gemm_bf16_tile128x128(a: BufferDesc, b: BufferDesc, c: BufferDesc, k: int) -> None:
    lds_a, lds_b = LdsTile((BLOCK_M, BLOCK_K), "bf16"), LdsTile((BLOCK_K, BLOCK_N), "bf16")
    row0, col0 = tile_origin(BLOCK_M, BLOCK_N)
    acc = Accumulator((BLOCK_M // WAVES, BLOCK_N), "f32")
    for k0 in range(0, k, BLOCK_K):
        a_blk, b_blk = a.load_tile(row0, k0, BLOCK_M, BLOCK_K), b.load_tile(k0, col0, BLOCK_K, BLOCK_N)
        # Stage both tiles in LDS; every wave of the workgroup reads fragments of both,
        # so the barrier orders the writes of all waves before the first read.
        lds_a.store(a_blk); lds_b.store(b_blk); barrier()
        a_frag, b_frag = load_fragments(lds_a, lds_b, wave_rows=BLOCK_M // WAVES)
        # 16 MFMAs per step: 4 row blocks x 4 column blocks of 16x16, K=32 twice per
        # fragment pair; the accumulators stay in AGPRs across the loop.
        acc = mfma_16x16x32_bf16(a_frag, b_frag, acc)
        # rows exchanged across lanes for the swizzled C layout, then the next K step
        acc = reduce_lanes(acc, swizzle=True); barrier()
    store_tile(c, row0, col0, acc.to("bf16"))


KERNEL = gemm_bf16_tile128x128
