"""Synthetic dispatches that plant one pattern each for the truth table (`capture: synth:<name>`).

Each `make_<name>(out_dir)` writes one ui_output dir (plus the side files a real run would leave
beside it: agent_info, and a kernel trace where the pattern needs a launch) with hotspot's own
generator and returns the dispatch dir. The expert's verdict on each is the matching
`tests/truth/synth-<name>.yaml`; row numbers there are the 1-based rows of the programs below.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, LatencyModel, make_dispatch
from hotspot.synth import program as synth_program
from hotspot.synth import writer as synth_writer

SRC = "/work/synth/kernels/truth.py"
MFMA_950 = "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]"
FOUR_SIMDS = Layout(ses=(0, 1), simds=4, slots=2, other_cus=(0, 2))
KT_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
             "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
             "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z")


def _program(rows: list[str], loops=()) -> ExplicitProgram:
    return ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(rows)], loops)


def _spec(rows: list[str], loops=(), *, waves: int = 16, kernel: str = "truth_kernel_0",
          layout: Layout = FOUR_SIMDS, latency: LatencyModel | None = None) -> DispatchSpec:
    return DispatchSpec(arch="gfx950", kernel=kernel, program=_program(rows, loops), waves=waves,
                        layout=layout, variants=waves, agent_info=True, prefix="truth",
                        latency=latency or LatencyModel())


def _kernel_trace(path: Path, rows: list[tuple[int, str, int, int, int, int]]) -> None:
    """rows: (dispatch_id, kernel, start_ns, end_ns, workgroup_size, workgroups); LDS 0, VGPR 32."""
    lines = [KT_HEADER]
    for did, name, start, end, wg, wgs in rows:
        lines.append(f'KERNEL_DISPATCH,"Agent 4",1,0,7,{did},3,"{name}",{did},{start},{end},0,0,32,0,24,'
                     f"{wg},1,1,{wg * wgs},1,1")
    path.write_text("\n".join(lines) + "\n")


def make_runtime_fill(out_dir: Path) -> Path:
    """hipMemset's runtime kernel: a grid-stride loop of 16-byte stores. Not user code."""
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",          # 1 buffer base, size
            "s_load_dwordx2 s[8:9], s[0:1], 0x10",         # 2 fill pattern
            "s_waitcnt lgkmcnt(0)",                         # 3
            "v_lshl_add_u64 v[2:3], v[0:1], 4, s[4:5]",     # 4 loop start: address
            "v_mov_b32 v4, s8",                             # 5
            "v_mov_b32 v5, s9",                             # 6
            "v_mov_b32 v6, s8",                             # 7
            "v_mov_b32 v7, s9",                             # 8
            "global_store_dwordx4 v[2:3], v[4:7], off",     # 9
            "v_add_u32 v0, 0x4000, v0",                     # 10
            "v_cmp_gt_u32 vcc, s6, v0",                     # 11
            "s_cbranch_vccnz 65529",                        # 12 back edge to 4
            "s_endpgm"]                                     # 13
    return make_dispatch(out_dir, _spec(rows, loops=[(3, 11, 24)], kernel="__amd_rocclr_fillBufferAligned"),
                         seed=5)


def make_early_exit(out_dir: Path) -> Path:
    """A split-KV style kernel: each wave reads its work range and most find it empty (branch to
    s_endpgm after 9 instructions); the few working waves run an MFMA loop whose tile load is waited
    on right after issue."""
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",                   # 1 metadata descriptor
            "s_load_dwordx4 s[8:11], s[0:1], 0x10",                 # 2 tile descriptor
            "s_waitcnt lgkmcnt(0)",                                 # 3
            "buffer_load_dwordx2 v[4:5], v1, s[4:7], 0 offen",      # 4 this workgroup's [begin, end)
            "s_waitcnt vmcnt(0)",                                   # 5
            "v_readfirstlane_b32 s33, v4",                          # 6
            "v_readfirstlane_b32 s40, v5",                          # 7
            "s_cmp_ge_i32 s33, s40",                                # 8
            "s_cbranch_scc1 21",                                    # 9 empty range -> s_endpgm
            "v_mov_b32 v20, 0",                                     # 10
            "buffer_load_dwordx4 v[0:3], v2, s[8:11], 0 offen",     # 11 loop start: tile load
            "v_add_u32 v2, 0x400, v2",                              # 12
            "s_waitcnt vmcnt(0)",                                   # 13 waited at once
            MFMA_950,                                               # 14
            MFMA_950,                                               # 15
            MFMA_950,                                               # 16
            MFMA_950,                                               # 17
            "s_add_u32 s33, s33, 1",                                # 18
            "s_cmp_lt_i32 s33, s40",                                # 19
            "s_cbranch_scc1 65527",                                 # 20 back edge to 11
            "v_accvgpr_read_b32 v8, a0",                            # 21
            "buffer_store_dword v8, v2, s[8:11], 0 offen",          # 22
            "s_endpgm"]                                             # 23
    code = synth_program._explicit(_program(rows, loops=[(10, 19, 4)]), "gfx950")
    # 0-based: the branch at row 9 jumps to s_endpgm (row 23) for ~4 of 5 waves (the explicit
    # program has no forward branches, so the generator's program builder is handed this one)
    code = synth_program.Code(code.rows, code.loop_end, {8: (22, 0.8)})
    with mock.patch.object(synth_writer, "build", lambda *_a, **_k: code):
        return make_dispatch(out_dir, _spec(rows, waves=64), seed=11)


def make_streaming_first_load(out_dir: Path) -> Path:
    """A streaming kernel (one 16-byte element per lane) whose only load is the first instruction
    after the kernel-argument wait; the launch is large and the kernel far from the bandwidth peak."""
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",                   # 1 input descriptor
            "s_load_dwordx4 s[8:11], s[0:1], 0x10",                 # 2 output descriptor
            "v_lshl_or_b32 v8, s2, 12, v0",                         # 3 offset from workgroup id
            "s_waitcnt lgkmcnt(0)",                                 # 4
            "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen",      # 5 the only load
            "s_waitcnt vmcnt(0)",                                   # 6
            "v_pk_mul_f32 v[0:1], v[0:1], v[0:1]",                  # 7
            "v_pk_mul_f32 v[2:3], v[2:3], v[2:3]",                  # 8
            "buffer_store_dwordx4 v[0:3], v8, s[8:11], 0 offen",    # 9
            "s_endpgm"]                                             # 10
    # kernel-argument loads served from the scalar cache (short smem latency), as in a warm stream
    d = make_dispatch(out_dir, _spec(rows, waves=32, latency=LatencyModel(smem=(120, 280))), seed=7)
    # 8192 workgroups of 256 (16 B per lane read + written: 64 MiB) in 40 us: ~1.7 TB/s, ~21% of
    # the MI350X peak -- latency-exposed, not bandwidth-bound
    _kernel_trace(d.parent / "truth_kernel_trace.csv", [(1, "truth_kernel_0", 1_000, 41_000, 256, 8192)])
    return d


def make_load_after_store(out_dir: Path) -> Path:
    """A kernel that computes a value in a loop, stores it, and only then loads its next operand,
    right after the store, waiting on both with vmcnt(0). Swapping the store and the load gains
    nothing (both are still issued just before the wait); the load's address is known at the entry,
    so it can be issued before the loop and waited with a counted vmcnt that skips the store."""
    rows = ["s_load_dwordx8 s[4:11], s[0:1], 0x0",                  # 1 out + bias descriptors
            "s_waitcnt lgkmcnt(0)",                                 # 2
            "v_lshlrev_b32 v8, 4, v0",                              # 3
            "s_mov_b32 s20, 0",                                     # 4
            "v_fma_f32 v1, v0, v0, 1.0",                            # 5 loop start: the value to store
            "v_fma_f32 v2, v1, v1, v0",                             # 6
            "v_fma_f32 v3, v2, v2, v1",                             # 7
            "v_fma_f32 v4, v3, v3, v2",                             # 8
            "v_fma_f32 v6, v4, v4, v3",                             # 9
            "v_fma_f32 v7, v6, v6, v4",                             # 10
            "v_fma_f32 v9, v7, v7, v6",                             # 11
            "v_fma_f32 v0, v9, v9, v7",                             # 12
            "s_add_u32 s20, s20, 1",                                # 13
            "s_cmp_lt_u32 s20, 24",                                 # 14
            "s_cbranch_scc1 65526",                                 # 15 back edge to 5
            "buffer_store_dwordx4 v[6:9], v8, s[4:7], 0 offen",     # 16 store
            "buffer_load_dwordx4 v[12:15], v8, s[8:11], 0 offen",   # 17 load right after it
            "v_mov_b32 v16, 0",                                     # 18
            "s_waitcnt vmcnt(0)",                                   # 19 waits for both
            "v_add_f32 v12, v12, v9",                               # 20
            "buffer_store_dword v12, v8, s[4:7], 0 offen offset:16",  # 21
            "s_endpgm"]                                             # 22
    return make_dispatch(out_dir, _spec(rows, loops=[(4, 14, 24)], waves=32, latency=LatencyModel(smem=(120, 280))),
                         seed=9)


def make_launch_ambiguous(out_dir: Path) -> Path:
    """An LDS->MFMA loop whose kernel name has three grid shapes in the kernel trace and no row with
    this dispatch's id: the launch is unknown (one of the shapes would look like grid underfill)."""
    body: list[str] = []
    for k in range(4):
        body += [f"ds_read_b128 v[{8 * k}:{8 * k + 3}], v100 offset:{512 * k}",
                 "s_waitcnt lgkmcnt(0)",
                 MFMA_950]
    rows = (["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "s_mov_b32 s20, 0"]
            + body + ["s_add_u32 s20, s20, 1", "s_cmp_lt_u32 s20, 16", "s_cbranch_scc1 65520", "s_endpgm"])
    # rows 4-18 are the loop body and back edge (0-based 3..17)
    d = make_dispatch(out_dir, _spec(rows, loops=[(3, 17, 16)], waves=32), seed=13)
    name = "truth_kernel_0"
    _kernel_trace(d.parent / "truth_kernel_trace.csv", [(40, name, 1_000, 9_000, 256, 8),
                                                        (41, name, 10_000, 60_000, 256, 1024),
                                                        (42, name, 61_000, 80_000, 256, 256)])
    return d


MAKERS = {"runtime-fill": make_runtime_fill, "early-exit": make_early_exit,
          "streaming-first-load": make_streaming_first_load, "load-after-store": make_load_after_store,
          "launch-ambiguous": make_launch_ambiguous}
