"""Synthetic dispatches that plant one pattern each for the truth table (`capture: synth:<name>`).

Each `make_<name>(out_dir)` writes one ui_output dir (plus the side files a real run would leave
beside it: agent_info, and a kernel trace where the pattern needs a launch) with hotspot's own
generator and returns the dispatch dir. The expert's verdict on each is the matching
`tests/truth/synth-<name>.yaml`; row numbers there are the 1-based rows of the programs below.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, LatencyModel, make_dispatch
from hotspot.synth import isa as synth_isa
from hotspot.synth import program as synth_program
from hotspot.synth import writer as synth_writer
from hotspot.synth.wave import WaveRun

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




# --- plants of issue 33: spills, the matrix-core ceiling, ping-pong barriers, one-shot branches,
# store epilogues, saturated streaming ------------------------------------------------------------

MFMA_942 = "v_mfma_f32_16x16x16_bf16"          # gfx942: 4 passes (HARDWARE.md §4)
MFMA_950_32 = "v_mfma_f32_32x32x16_bf16"       # gfx950: 8 passes
BRANCH = re.compile(r"^(s_c?branch\w*) @(\d+)$")


def _resolve_branches(rows: list[str]) -> list[str]:
    """Rows may hold `s_branch @N` / `s_cbranch_scc1 @N` (N = 1-based target row): the branch's
    SIMM16 is filled in from the encoded sizes the writer uses for Vaddr (target = PC + 4 + 4*SIMM16)."""
    addr = [0]
    for isa in rows:
        addr.append(addr[-1] + synth_isa.instruction_size(BRANCH.sub(r"\1 0", isa)))
    out = []
    for i, isa in enumerate(rows):
        m = BRANCH.match(isa)
        if m:
            simm = (addr[int(m.group(2)) - 1] - addr[i] - 4) // 4
            isa = f"{m.group(1)} {simm & 0xFFFF}"
        out.append(isa)
    return out


def _wave_slots(spec: DispatchSpec) -> list[int]:
    """The slot of each wave, in the order the writer simulates them (variant v = wave v)."""
    lay = spec.layout
    groups = [(se, simd, slot) for slot in range(lay.slots) for simd in range(lay.simds) for se in lay.ses]
    per, extra = divmod(spec.waves, len(groups))
    counts = {g: per + (i < extra) for i, g in enumerate(groups)}
    order = sorted(groups, key=lambda g: (lay.ses.index(g[0]), g[1], g[2]))
    return [g[2] for g in order for _ in range(counts[g])]


def _retimed(code: synth_program.Code, run: WaveRun, extra: dict[int, tuple[int, int]],
             rng: random.Random) -> WaveRun:
    """The simulated wave with `extra` stall (a drawn range per 1-based row) added to those rows'
    records; later records shift, the timeline and per-row sums are rebuilt the way the timing model
    builds them (gap -> IDLE, waits/barriers/nops/s_endpgm -> WAIT, other stall -> STALL, issue -> EXEC)."""
    n = len(code.rows) + 1
    hit, lat, stall, idle = [0] * n, [0] * n, [0] * n, [0] * n
    records: list[list[int]] = []
    timeline: list[list[int]] = []

    def state(st: int, cycles: int) -> None:
        if cycles > 0:
            if timeline and timeline[-1][0] == st:
                timeline[-1][1] += cycles
            else:
                timeline.append([st, cycles])

    shift, prev_end = 0, 0
    for t, cat, st, du, line in run.records:
        add = 0
        if line in extra:
            lo, hi = extra[line]
            add = (lo + int(rng.random() * (hi - lo + 1))) // 4 * 4
        t += shift
        st, du = st + add, du + add
        shift += add
        state(synth_isa.STATE_IDLE, t - prev_end)
        if code.rows[line - 1].info.kind in ("waitcnt", "barrier", "nop", "endpgm"):
            state(synth_isa.STATE_WAIT, du)
        else:
            state(synth_isa.STATE_STALL, st)
            state(synth_isa.STATE_EXEC, du - st)
        records.append([t, cat, st, du, line])
        hit[line] += 1
        lat[line] += du
        stall[line] += st
        idle[line] += t - prev_end
        prev_end = t + du
    return WaveRun(records, timeline, run.edges, prev_end, hit, lat, stall, idle, [])


def _make_planted(out_dir: Path, spec: DispatchSpec, seed: int, code_of: Callable[[int], synth_program.Code],
                  extra_of: Callable[[int], dict[int, tuple[int, int]]]) -> Path:
    """make_dispatch with a per-wave program (`code_of(wave)`, e.g. a conditional branch taken by one
    half of the waves) and per-wave planted stall (`extra_of(wave)`: 1-based row -> cycle range): what
    the generator cannot model itself (barriers waiting for other waves, store issue back-pressure)."""
    if spec.variants < spec.waves:   # wave v must be simulated as variant v (no reuse) for code_of(v)
        raise ValueError("_make_planted needs one simulated variant per wave (variants >= waves)")
    calls = iter(range(spec.waves))
    real = synth_writer.simulate

    def simulate(_code: synth_program.Code, lat: LatencyModel, rng: random.Random) -> WaveRun:
        v = next(calls)
        return _retimed(code_of(v), real(code_of(v), lat, rng), extra_of(v), random.Random(seed * 7919 + v))

    with mock.patch.object(synth_writer, "build", lambda *_a, **_k: code_of(0)), \
            mock.patch.object(synth_writer, "simulate", simulate):
        return make_dispatch(out_dir, spec, seed=seed)


def make_spilled_loop(out_dir: Path) -> Path:
    """A gfx942 GEMM loop at 256 VGPRs (2 waves/SIMD) whose compiler spilled three LDS addresses and
    one accumulator tile to scratch: each iteration reloads them with scratch_load right before use,
    waited by s_waitcnt vmcnt(0). vmcnt retires in order, so the first of those waits also drains the
    next tile's two prefetch loads issued just before it."""
    acc = [f"v[{4 * k}:{4 * k + 3}]" for k in range(4)]
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",                    # 1 A descriptor
            "s_load_dwordx4 s[8:11], s[0:1], 0x10",                  # 2 B descriptor
            "s_load_dwordx4 s[12:15], s[0:1], 0x20",                 # 3 C descriptor
            "v_lshlrev_b32_e32 v17, 4, v16",                         # 4 global offset (v16 = lane id)
            "v_and_b32_e32 v18, 0x78, v16",                          # 5 LDS swizzle
            "v_xor_b32_e32 v19, v18, v17",                           # 6 LDS read address
            "s_waitcnt lgkmcnt(0)",                                  # 7
            "scratch_store_dword off, v19, off offset:16",           # 8 spill: LDS read address A
            "v_add_u32_e32 v19, 0x800, v19",                         # 9
            "scratch_store_dword off, v19, off offset:20",           # 10 spill: LDS read address B
            "v_add_u32_e32 v19, 0x1000, v19",                        # 11
            "scratch_store_dword off, v19, off offset:24",           # 12 spill: LDS write address
            "s_mov_b32 s20, 0",                                      # 13
            "buffer_load_dwordx4 v[248:251], v17, s[4:7], 0 offen",   # 14 loop: prefetch next A tile
            "buffer_load_dwordx4 v[252:255], v17, s[8:11], 0 offen",  # 15 prefetch next B tile
            "v_add_u32_e32 v17, 64, v17",                            # 16
            "scratch_load_dword v19, off, off offset:16",            # 17 reload LDS address A
            "s_waitcnt vmcnt(0)",                                    # 18 waits #17, drains #14 #15
            "ds_read_b128 v[200:203], v19",                          # 19
            "ds_read_b128 v[204:207], v19 offset:256",               # 20
            "scratch_load_dword v19, off, off offset:20",            # 21 reload LDS address B
            "s_waitcnt vmcnt(0)",                                    # 22
            "ds_read_b128 v[208:211], v19",                          # 23
            "ds_read_b128 v[212:215], v19 offset:256",               # 24
            "s_waitcnt lgkmcnt(2)",                                  # 25
            f"{MFMA_942} {acc[0]}, v[200:201], v[208:209], {acc[0]}",  # 26
            f"{MFMA_942} {acc[1]}, v[202:203], v[208:209], {acc[1]}",  # 27
            "s_waitcnt lgkmcnt(0)",                                  # 28
            f"{MFMA_942} {acc[2]}, v[204:205], v[212:213], {acc[2]}",  # 29
            f"{MFMA_942} {acc[3]}, v[206:207], v[212:213], {acc[3]}",  # 30
            "scratch_load_dwordx4 v[216:219], off, off offset:32",   # 31 reload the spilled accumulator
            "s_waitcnt vmcnt(0)",                                    # 32
            f"{MFMA_942} v[216:219], v[200:201], v[214:215], v[216:219]",  # 33
            f"{MFMA_942} {acc[0]}, v[202:203], v[214:215], {acc[0]}",  # 34
            f"{MFMA_942} {acc[1]}, v[204:205], v[210:211], {acc[1]}",  # 35
            "s_nop 4",                                               # 36 MFMA result hazard before the store
            "scratch_store_dwordx4 off, v[216:219], off offset:32",  # 37 spill it back
            "scratch_load_dword v19, off, off offset:24",            # 38 reload LDS write address
            "s_waitcnt vmcnt(0)",                                    # 39 waits #38 (and the store #37)
            "ds_write_b128 v19, v[248:251]",                         # 40 the prefetched tiles to LDS
            "ds_write_b128 v19, v[252:255] offset:4096",             # 41
            "s_add_u32 s20, s20, 1",                                 # 42
            "s_cmp_lt_u32 s20, 32",                                  # 43
            "s_cbranch_scc1 @14",                                    # 44 back edge
            "s_waitcnt lgkmcnt(0)",                                  # 45
            "v_cvt_pk_bf16_f32 v0, v0, v1",                          # 46
            "v_cvt_pk_bf16_f32 v1, v2, v3",                          # 47
            "buffer_store_dwordx2 v[0:1], v17, s[12:15], 0 offen",   # 48
            "s_endpgm"]                                              # 49
    spec = DispatchSpec(arch="gfx942", kernel="truth_spill_gemm_0", program=_program(_resolve_branches(rows),
                        loops=[(13, 43, 32)]), waves=32, layout=FOUR_SIMDS, variants=32, agent_info=True,
                        prefix="truth", latency=LatencyModel(vmem_load=(440, 900), smem=(120, 280)))
    return make_dispatch(out_dir, spec, seed=17)


def make_mfma_bound(out_dir: Path) -> Path:
    """A tuned gfx950 GEMM loop at 1 wave/SIMD (256 VGPRs + 256 AGPRs): 32 v_mfma_f32_32x32x16_bf16
    (8 passes, 32 cycles each) per iteration into 16 independent accumulators, the next fragments read
    from LDS and the next tile loaded from memory a whole iteration ahead, all waited with counted
    waits: the MFMA pipe stays busy ~95% of the loop, and no wait is worth more than the ~5% left."""
    acc = [f"a[{16 * k}:{16 * k + 15}]" for k in range(16)]
    rows = ["s_load_dwordx8 s[4:11], s[0:1], 0x0",                   # 1 A, B descriptors
            "s_load_dwordx4 s[12:15], s[0:1], 0x20",                 # 2 C descriptor
            "v_lshlrev_b32_e32 v250, 4, v255",                       # 3 global offset (v255 = lane id)
            "v_lshlrev_b32_e32 v251, 6, v255",                       # 4 LDS read address
            "v_add_u32_e32 v252, 0x4000, v251",                      # 5 LDS write address
            "s_waitcnt lgkmcnt(0)",                                  # 6
            "buffer_load_dwordx4 v[240:243], v250, s[4:7], 0 offen",   # 7 first A tile
            "buffer_load_dwordx4 v[244:247], v250, s[8:11], 0 offen",  # 8 first B tile
            "s_waitcnt vmcnt(0)",                                    # 9
            "ds_write_b128 v251, v[240:243]",                        # 10
            "ds_write_b128 v251, v[244:247] offset:8192",            # 11
            "s_waitcnt lgkmcnt(0)",                                  # 12
            "s_barrier",                                             # 13
            "s_mov_b32 s20, 0"]                                      # 14
    loop_start = len(rows) + 1
    body = ["buffer_load_dwordx4 v[240:243], v250, s[4:7], 0 offen offset:64",   # next tile, an iteration ahead
            "buffer_load_dwordx4 v[244:247], v250, s[8:11], 0 offen offset:64",
            "v_add_u32_e32 v250, 64, v250"]
    for step in range(2):                      # two K steps of 16 MFMAs; fragments double-buffered
        cur, nxt = (0, 32) if step == 0 else (32, 0)
        for k in range(16):
            a, b = k // 4, k % 4
            body.append(f"{MFMA_950_32} {acc[k]}, v[{cur + 4 * a}:{cur + 4 * a + 3}], "
                        f"v[{cur + 16 + 4 * b}:{cur + 16 + 4 * b + 3}], {acc[k]}")
            if k < 8:                          # the next step's fragments, read in the MFMA shadow
                r = k
                body.append(f"ds_read_b128 v[{nxt + 4 * r}:{nxt + 4 * r + 3}], v251 offset:{1024 * (2 * step + 1) + 256 * r}")
            if step == 1 and k == 11:          # the prefetched tile into the other LDS buffer
                body += ["s_waitcnt vmcnt(0)", "ds_write_b128 v252, v[240:243]",
                         "ds_write_b128 v252, v[244:247] offset:8192"]
        body.append("s_waitcnt lgkmcnt(0)")
    body += ["s_barrier", "s_add_u32 s20, s20, 1", "s_cmp_lt_u32 s20, 24", f"s_cbranch_scc1 @{loop_start}"]
    rows += body
    loop_end = len(rows)
    rows += ["v_accvgpr_read_b32 v0, a0",
             "v_accvgpr_read_b32 v1, a1",
             "v_cvt_pk_bf16_f32 v0, v0, v1",
             "buffer_store_dword v0, v250, s[12:15], 0 offen",
             "s_endpgm"]
    layout = Layout(ses=(0, 1), simds=4, slots=1, other_cus=(0, 2))
    spec = DispatchSpec(arch="gfx950", kernel="truth_mfma_bound_gemm_0",
                        program=_program(_resolve_branches(rows), loops=[(loop_start - 1, loop_end - 1, 24)]),
                        waves=32, layout=layout, variants=32, agent_info=True, prefix="truth",
                        latency=LatencyModel(vmem_load=(480, 900), smem=(120, 280), barrier=(8, 72),
                                             pipe_stall=(4, 24), gap=(4, 16), branch_gap=(8, 16)))
    return make_dispatch(out_dir, spec, seed=19)


def _with_branches(code: synth_program.Code, forward: dict[int, tuple[int, float]]) -> synth_program.Code:
    """The program with forward branches (0-based branch row -> (0-based target row, taken probability))."""
    return synth_program.Code(code.rows, code.loop_end, forward)


def make_pingpong(out_dir: Path) -> Path:
    """An 8-wave gfx950 ping-pong GEMM (2 waves/SIMD, one workgroup per CU): the second half of the
    workgroup executes one conditional s_barrier more before the loop, so from then on each
    hardware barrier pairs one half's barrier after its memory phase (#48) with the other half's
    barrier after its MFMA cluster (#83). Waiting at #48 is the design (the other half computes);
    waiting at #83 leaves the SIMD's matrix core idle while the other half finishes its loads."""
    ds = [f"ds_read_b128 v[{4 * r}:{4 * r + 3}], v253 offset:{512 * r}" for r in range(16)]
    mfma = []
    for half in range(2):                      # two K halves: A v[0:15]/v[32:47], B v[16:31]/v[48:63]
        for k in range(16):
            a, b, c = 32 * half + 4 * (k // 4), 32 * half + 16 + 4 * (k % 4), 64 + 4 * k
            mfma.append(f"{MFMA_950.split()[0]} v[{c}:{c + 3}], v[{a}:{a + 3}], v[{b}:{b + 3}], v[{c}:{c + 3}]")
    rows = (["s_load_dwordx8 s[4:11], s[0:1], 0x0",                 # 1 A, B descriptors
             "s_load_dwordx4 s[16:19], s[0:1], 0x20",               # 2 C descriptor
             "v_lshlrev_b32_e32 v251, 4, v255",                     # 3 global offset (v255 = thread id)
             "v_lshlrev_b32_e32 v252, 5, v255",                     # 4 LDS write address
             "v_and_b32_e32 v253, 0x3f0, v252",                     # 5 LDS read address
             "v_cmp_le_u32_e32 vcc, 0x100, v255",                   # 6 waves 4-7: the second half
             "s_waitcnt lgkmcnt(0)",                                # 7
             "buffer_load_dwordx4 v[200:203], v251, s[4:7], 0 offen",   # 8 tile 0
             "buffer_load_dwordx4 v[204:207], v251, s[8:11], 0 offen",  # 9
             "s_waitcnt vmcnt(0)",                                  # 10
             "ds_write_b128 v252, v[200:203]",                      # 11
             "ds_write_b128 v252, v[204:207] offset:8192",          # 12
             "buffer_load_dwordx4 v[200:203], v251, s[4:7], 0 offen offset:64",   # 13 tile 1
             "buffer_load_dwordx4 v[204:207], v251, s[8:11], 0 offen offset:64",  # 14
             "v_add_u32_e32 v251, 0x80, v251",                      # 15
             "s_waitcnt lgkmcnt(0)",                                # 16
             "s_barrier",                                           # 17 tile 0 in LDS for all 8 waves
             "s_and_saveexec_b64 s[12:13], vcc",                    # 18
             "s_cbranch_execz @21",                                 # 19 the first half skips ...
             "s_barrier",                                           # 20 ... the barrier that puts the second half one phase behind
             "s_or_b64 exec, exec, s[12:13]",                       # 21
             "s_mov_b32 s20, 0"]                                    # 22
            + ds                                                    # 23-38 memory phase: this tile's fragments
            + ["s_waitcnt vmcnt(0)",                                # 39 the tile loaded an iteration ago
               "ds_write_b128 v252, v[200:203] offset:16384",       # 40 ... into the other LDS buffer
               "ds_write_b128 v252, v[204:207] offset:24576",       # 41
               "buffer_load_dwordx4 v[200:203], v251, s[4:7], 0 offen",   # 42 the next tile
               "buffer_load_dwordx4 v[204:207], v251, s[8:11], 0 offen",  # 43
               "v_add_u32_e32 v251, 64, v251",                      # 44
               "v_xor_b32_e32 v253, 0x4000, v253",                  # 45 swap the LDS buffers
               "v_xor_b32_e32 v252, 0x4000, v252",                  # 46
               "s_waitcnt lgkmcnt(0)",                              # 47
               "s_barrier",                                         # 48 after the memory phase
               "s_setprio 1"]                                       # 49
            + mfma                                                  # 50-81 the MFMA cluster
            + ["s_setprio 0",                                       # 82
               "s_barrier",                                         # 83 after the MFMA cluster
               "s_add_u32 s20, s20, 1",                             # 84
               "s_cmp_lt_u32 s20, 32",                              # 85
               "s_cbranch_scc1 @23",                                # 86 back edge
               "v_cmp_gt_u32_e32 vcc, 0x100, v255",                 # 87 the first half ...
               "s_and_saveexec_b64 s[12:13], vcc",                  # 88
               "s_cbranch_execz @91",                               # 89
               "s_barrier",                                         # 90 ... waits once more: realigned
               "s_or_b64 exec, exec, s[12:13]",                     # 91
               "v_cvt_pk_bf16_f32 v64, v64, v65",                   # 92
               "v_cvt_pk_bf16_f32 v65, v66, v67",                   # 93
               "buffer_store_dwordx2 v[64:65], v251, s[16:19], 0 offen",  # 94
               "s_endpgm"])                                         # 95
    spec = DispatchSpec(arch="gfx950", kernel="truth_pingpong_gemm_0",
                        program=_program(_resolve_branches(rows), loops=[(22, 85, 32)]), waves=32,
                        layout=FOUR_SIMDS, variants=32, agent_info=True, prefix="truth",
                        latency=LatencyModel(vmem_load=(480, 900), smem=(120, 280), barrier=(4, 8)))
    base = synth_program._explicit(spec.program, "gfx950")
    first_half = _with_branches(base, {18: (20, 1.0), 88: (90, 0.0)})
    second_half = _with_branches(base, {18: (20, 0.0), 88: (90, 1.0)})
    slots = _wave_slots(spec)               # slot 0 waves: the first half, slot 1: the second half
    # what the other waves of the workgroup make each barrier wait (the generator does not synchronise
    # waves): #48 waits for the other half's MFMA cluster (~512 cycles against a ~200-cycle memory
    # phase), #83 for the other half's memory phase when it runs longer than an MFMA cluster
    common = {17: (40, 300), 48: (180, 420), 83: (40, 260)}
    extra = [{**common, 90: (200, 420)} if s == 0 else {**common, 20: (200, 420)} for s in slots]
    return _make_planted(out_dir, spec, 23, lambda v: first_half if slots[v] == 0 else second_half,
                         lambda v: extra[v])


def make_backward_branch(out_dir: Path) -> Path:
    """A gfx950 LDS -> MFMA loop whose prologue block (the first tile's global loads, waited at once,
    and its LDS stores) was laid out by the compiler after s_endpgm: the entry jumps forward to it
    (#7) and it jumps back to the loop head (#43 -> #8). That backward s_branch is taken once per
    wave; it is not a loop, and the global loads #33/#34 and their wait #38 run once per wave, outside
    the MFMA loop (#8-#27, 12 trips), whose ds_read -> lgkmcnt(0) -> MFMA waits hold most stall."""
    body = []
    for k in range(4):
        body += [f"ds_read_b128 v[{8 * k}:{8 * k + 3}], v49" + (f" offset:{512 * k}" if k else ""),
                 f"ds_read_b128 v[{8 * k + 4}:{8 * k + 7}], v49 offset:{512 * k + 4096}",
                 "s_waitcnt lgkmcnt(0)",
                 f"v_mfma_f32_16x16x32_bf16 a[{4 * k}:{4 * k + 3}], v[{8 * k}:{8 * k + 3}], "
                 f"v[{8 * k + 4}:{8 * k + 7}], a[{4 * k}:{4 * k + 3}]"]
    rows = (["s_load_dwordx4 s[4:7], s[0:1], 0x0",                   # 1 A descriptor
             "s_load_dwordx4 s[8:11], s[0:1], 0x10",                 # 2 B descriptor
             "s_load_dwordx4 s[12:15], s[0:1], 0x20",                # 3 C descriptor
             "v_lshlrev_b32_e32 v48, 4, v0",                         # 4 global offset (v0 = thread id)
             "v_lshlrev_b32_e32 v49, 6, v0",                         # 5 LDS address
             "s_waitcnt lgkmcnt(0)",                                 # 6
             "s_branch @33"]                                         # 7 to the prologue block (once)
            + body                                                   # 8-23 loop: 4 x (2 reads, wait, MFMA)
            + ["v_add_u32_e32 v49, 32, v49",                         # 24
               "s_add_u32 s20, s20, 1",                              # 25
               "s_cmp_lt_u32 s20, 12",                               # 26
               "s_cbranch_scc1 @8",                                  # 27 the loop's back edge
               "v_accvgpr_read_b32 v0, a0",                          # 28 epilogue
               "v_accvgpr_read_b32 v1, a1",                          # 29
               "v_cvt_pk_bf16_f32 v0, v0, v1",                       # 30
               "buffer_store_dword v0, v48, s[12:15], 0 offen",      # 31
               "s_endpgm",                                           # 32
               "buffer_load_dwordx4 v[40:43], v48, s[4:7], 0 offen",    # 33 prologue block: tile 0
               "buffer_load_dwordx4 v[44:47], v48, s[8:11], 0 offen",   # 34
               "v_accvgpr_write_b32 a0, 0",                          # 35
               "v_accvgpr_write_b32 a1, 0",                          # 36
               "s_mov_b32 s20, 0",                                   # 37
               "s_waitcnt vmcnt(0)",                                 # 38
               "ds_write_b128 v49, v[40:43]",                        # 39
               "ds_write_b128 v49, v[44:47] offset:4096",            # 40
               "s_waitcnt lgkmcnt(0)",                               # 41
               "s_barrier",                                          # 42
               "s_branch @8"])                                       # 43 back to the loop head, once
    rows = _resolve_branches(rows)
    code = synth_program.Code(tuple(synth_program.Row(isa, f"{SRC}:{i + 10}", synth_isa.classify(isa, "gfx950"))
                                    for i, isa in enumerate(rows)),
                              {26: (7, 12), 42: (7, 2)},     # 0-based: the loop's back edge; #43 taken once
                              {6: (32, 1.0)})                # #7 -> #33 always
    # the writer's program builder wants s_endpgm last; the real layout has a block after it
    with mock.patch.object(synth_writer, "build", lambda *_a, **_k: code):
        return make_dispatch(out_dir, _spec(rows[:32], waves=32), seed=29)


def make_store_epilogue(out_dir: Path) -> Path:
    """An attention-style gfx950 kernel at 1 wave/SIMD (256 VGPRs + 64 AGPRs): a software-pipelined
    LDS -> MFMA loop (next fragments read
    in the MFMA shadow, waits covered) with a little softmax VALU, then an epilogue of 16
    global_store_dwordx2 per wave (8 bytes per lane; lanes 16 apart write rows 2 KB apart, the next
    store 4 rows further): each store writes four 128-byte row pieces, and the stores back up at
    issue (planted: the generator has no store back-pressure of its own)."""
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",                    # 1 K/V descriptor
            "s_load_dwordx2 s[8:9], s[0:1], 0x10",                   # 2 output pointer
            "v_lshlrev_b32_e32 v60, 3, v0",                          # 3 8 bytes per lane (v0 = thread id)
            "v_lshrrev_b32_e32 v61, 4, v0",                          # 4 lanes 16 apart ...
            "v_lshlrev_b32_e32 v62, 11, v61",                        # 5 ... 2 KB apart: one output row each
            "v_lshlrev_b32_e32 v63, 6, v0",                          # 6 LDS address
            "s_waitcnt lgkmcnt(0)",                                  # 7
            "v_add3_u32 v60, s8, v60, v62",                          # 8
            "v_mov_b32_e32 v61, s9",                                 # 9
            "ds_read_b128 v[0:3], v63",                              # 10 first fragments
            "ds_read_b128 v[4:7], v63 offset:512",                   # 11
            "ds_read_b128 v[8:11], v63 offset:4096",                 # 12
            "ds_read_b128 v[12:15], v63 offset:4608",                # 13
            "s_waitcnt lgkmcnt(0)",                                  # 14
            "s_mov_b32 s20, 0"]                                      # 15
    loop_start = len(rows) + 1
    for half in range(2):                      # fragments double-buffered in v[0:15] / v[16:31]
        cur, nxt = (0, 16) if half == 0 else (16, 0)
        for k in range(4):
            a, b, c = cur + 4 * (k // 2), cur + 8 + 4 * (k % 2), 16 * k
            rows.append(f"{MFMA_950_32} a[{c}:{c + 15}], v[{a}:{a + 3}], v[{b}:{b + 3}], a[{c}:{c + 15}]")
            if k == 0:                         # the next half's fragments, three MFMAs ahead of the wait
                for r in range(4):
                    rows.append(f"ds_read_b128 v[{nxt + 4 * r}:{nxt + 4 * r + 3}], v63 "
                                f"offset:{1024 * (half + 1) + 512 * (r % 2) + 4096 * (r // 2)}")
        rows.append("s_waitcnt lgkmcnt(0)")
    rows += ["v_accvgpr_read_b32 v64, a0",                           # the row maximum and scale
             "v_accvgpr_read_b32 v65, a1",
             "v_max_f32_e32 v32, v64, v65",
             "v_sub_f32_e32 v33, v65, v32",
             "v_mul_f32_e32 v33, 0x3fb8aa3b, v33",
             "v_exp_f32_e32 v33, v33",
             "v_add_f32_e32 v255, v255, v33",                        # the running row sum
             "v_add_u32_e32 v63, 0x800, v63",
             "s_add_u32 s20, s20, 1",
             "s_cmp_lt_u32 s20, 16",
             f"s_cbranch_scc1 @{loop_start}"]
    loop_end = len(rows)
    store_rows = []
    for r in range(16):                        # the epilogue: 4 output rows per store, 2 KB apart
        c, d = 4 * r, 40 + 2 * (r % 4)
        rows += [f"v_accvgpr_read_b32 v64, a{c}", f"v_accvgpr_read_b32 v65, a{c + 1}",
                 f"v_accvgpr_read_b32 v66, a{c + 2}", f"v_accvgpr_read_b32 v67, a{c + 3}",
                 f"v_cvt_pk_bf16_f32 v{d}, v64, v65",
                 f"v_cvt_pk_bf16_f32 v{d + 1}, v66, v67",
                 f"global_store_dwordx2 v[60:61], v[{d}:{d + 1}], off"]
        store_rows.append(len(rows))
        rows += ["v_add_co_u32_e32 v60, vcc, 0x2000, v60",
                 "v_addc_co_u32_e32 v61, vcc, 0, v61, vcc"]
    rows.append("s_endpgm")
    spec = DispatchSpec(arch="gfx950", kernel="truth_attn_fwd_0",
                        program=_program(_resolve_branches(rows), loops=[(loop_start - 1, loop_end - 1, 16)]),
                        waves=32, layout=Layout(ses=(0, 1), simds=4, slots=1, other_cus=(0, 2)), variants=32,
                        agent_info=True, prefix="truth", latency=LatencyModel(smem=(120, 280), pipe_stall=(4, 24)))
    code = synth_program._explicit(spec.program, "gfx950")
    extra = {n: (100, 240) for n in store_rows}
    return _make_planted(out_dir, spec, 31, lambda _v: code, lambda _v: extra)


def make_streaming_saturated(out_dir: Path) -> Path:
    """A gfx950 streaming kernel (out = x * x, one 16-byte load and one 16-byte store per lane) at 8
    waves/SIMD, the hardware maximum (32 VGPRs, no LDS), launched with 65,536 workgroups of 256
    threads that move 512 MiB in 80 us: ~6.7 TB/s, ~84% of the MI350X's 8 TB/s. Its waits are the
    memory latency of its single load; other waves hide them as far as they can."""
    rows = ["s_load_dwordx4 s[4:7], s[0:1], 0x0",                   # 1 input descriptor
            "s_load_dwordx4 s[8:11], s[0:1], 0x10",                 # 2 output descriptor
            "v_lshlrev_b32_e32 v9, 4, v0",                          # 3 16 bytes per lane (v0 = thread id)
            "v_lshl_or_b32 v8, s2, 12, v9",                         # 4 + 4 KiB per workgroup (s2 = workgroup id)
            "s_waitcnt lgkmcnt(0)",                                 # 5
            "buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen",      # 6 the only load
            "s_waitcnt vmcnt(0)",                                   # 7
            "v_pk_mul_f32 v[0:1], v[0:1], v[0:1]",                  # 8
            "v_pk_mul_f32 v[2:3], v[2:3], v[2:3]",                  # 9
            "buffer_store_dwordx4 v[0:3], v8, s[8:11], 0 offen",    # 10 the only store
            "s_endpgm"]                                             # 11
    layout = Layout(ses=(0, 1), simds=4, slots=8, other_cus=(0, 2))
    # at 8 waves/SIMD every load queues behind the others' (loaded latency well above the idle one),
    # all slots start together and a finished wave's slot is refilled at once
    lat = LatencyModel(smem=(120, 280), vmem_load=(1400, 2600), slot_stagger=4, se_stagger=40, launch_gap=(16, 64))
    d = make_dispatch(out_dir, _spec(rows, waves=256, layout=layout, latency=lat), seed=37)
    _kernel_trace(d.parent / "truth_kernel_trace.csv", [(1, "truth_kernel_0", 1_000, 81_000, 256, 65536)])
    return d


MAKERS = {"runtime-fill": make_runtime_fill, "early-exit": make_early_exit,
          "streaming-first-load": make_streaming_first_load, "load-after-store": make_load_after_store,
          "launch-ambiguous": make_launch_ambiguous, "spilled-loop": make_spilled_loop,
          "mfma-bound": make_mfma_bound, "pingpong": make_pingpong, "backward-branch": make_backward_branch,
          "store-epilogue": make_store_epilogue, "streaming-saturated": make_streaming_saturated}
