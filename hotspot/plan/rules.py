"""The rule table: every plan rule as data (id, fields read, thresholds, fix, removable share and why).

docs/plan-rules.md documents each entry; tests/test_plan_rules.py checks the two agree.
"""

from __future__ import annotations

from hotspot.plan import access_rules as acc
from hotspot.plan import capture_rules as cap
from hotspot.plan import ceiling_rules as ceil
from hotspot.plan import launch_rules as launch
from hotspot.plan import compute_rules as cmp
from hotspot.plan import drain_rules as drain
from hotspot.plan import epilogue_rules as epi
from hotspot.plan import hazard_rules as hz
from hotspot.plan import kernarg_rules as ka
from hotspot.plan import lgkm_rules as lgkm
from hotspot.plan import memory_rules as mem
from hotspot.plan import pingpong_rules as pp
from hotspot.plan import resource_rules as res
from hotspot.plan import saturation_rules as sat
from hotspot.plan import spill_rules as spill
from hotspot.plan import spin_rules as spin
from hotspot.plan import store_rules as st
from hotspot.plan import waits_rules as wr
from hotspot.plan.model import HIDES_LATENCY, REMOVES_BYTES, REMOVES_COMPUTE, Kind, Rule
from hotspot.pmc import verdicts as pv

_WAIT_THRESHOLDS = {"little_cover_ratio": wr.LITTLE_COVER_RATIO}

RULES: tuple[Rule, ...] = (
    Rule(
        id="grid-underfill", title="fewer workgroups than compute units", kind=Kind.LAUNCH,
        reads=("occupancy",), optional_reads=(),
        thresholds={},
        fix="Give every CU work: launch at least one workgroup per CU (better, CUs x the workgroups "
            "one CU holds): split K across workgroups (split-K with an atomic or a second reduction "
            "pass), use smaller tiles, or batch several problems (heads, experts, sequences) into one "
            "launch; a persistent kernel can loop over tiles.",
        removable=(0.0, 0.0),
        basis="a launch-level gain: the idle CUs' share of the GPU, not a share of the traced waves' "
              "cycles",
        evaluate=launch.grid_underfill),
    Rule(
        id="bandwidth-bound", title="memory traffic near the bandwidth peak (no counters)",
        kind=Kind.MEMORY, reads=("occupancy", "instructions"), optional_reads=(),
        thresholds={"near_peak_fraction": launch.NEAR_PEAK_FRACTION},
        fix="Only fewer bytes help here: reuse data across workgroups (larger tiles, L2-friendly "
            "launch order), narrower types, fused kernels; confirm with `--pmc` counters (fabric "
            "bytes, hit rate) before any latency work.",
        removable=(0.0, 0.0),
        basis="informational: caps the memory-latency estimates at the bandwidth headroom",
        evaluate=launch.bandwidth_bound),
    Rule(
        id="streaming-saturated", title="streaming kernel at the hardware wave limit", kind=Kind.MEMORY,
        reads=("occupancy", "instructions", "stall_by_category"), optional_reads=(),
        thresholds={"min_wait_share": res.OCCUPANCY_MIN_WAIT_SHARE,
                    "min_achieved_fraction": res.OCCUPANCY_MIN_ACHIEVED_FRACTION},
        fix="Latency hiding is exhausted: the SIMDs hold the most waves the hardware allows. Only "
            "fewer bytes help (narrower types, fusing this kernel with its producer or consumer), or "
            "more bytes in flight per wave (several independent 16-byte loads per lane before one "
            "wait) while the traffic is below the bandwidth roof; confirm the bandwidth with a kernel "
            "trace (duration) or --pmc counters.",
        removable=(0.0, 0.0),  # the headroom below the streaming bound, computed per dispatch
        basis="a verdict: its estimate is the headroom below the streaming bound, which caps every "
              "latency item",
        evaluate=sat.streaming_saturated),
    Rule(
        id="matrix-core-bound", title="at the matrix core", kind=Kind.CODE,
        reads=("instructions",), optional_reads=("loops",),
        thresholds={"matrix_core_bound_busy": ceil.MATRIX_CORE_BOUND_BUSY},
        fix="Nothing to hide: the matrix cores are the bound. Only less MFMA work helps: the target's "
            "fastest MFMA shape for the data type, a narrower type, fewer FLOPs (skip masked tiles); "
            "latency work on this loop wins at most the idle share.",
        removable=(0.0, 0.0),  # computed per dispatch: the idle share of the loop's time
        basis="a verdict: the headroom below the matrix core",
        evaluate=ceil.matrix_core_bound, gain=REMOVES_COMPUTE),
    Rule(
        id="narrow-loads", title="narrow loads dominate the memory traffic", kind=Kind.CODE,
        reads=("instructions",), optional_reads=("waits",),
        thresholds={"narrow_min_exec_share": acc.NARROW_MIN_EXEC_SHARE, "wide_bytes": acc.WIDE_BYTES,
                    "narrow_min_per_wave": acc.NARROW_MIN_PER_WAVE},
        fix="Vectorize: have each lane load 16 contiguous bytes (buffer_load_dwordx4 / "
            "global_load_dwordx4, or a 128-bit vector type in the source) and unpack in registers; for "
            "gathers that feed MFMA, stage the tile through LDS (buffer_load ... lds, then ds_read_b128) "
            "so each lane issues one wide load.",
        removable=(0.3, 0.75),
        basis="a 16-byte load replaces 16/width narrow ones: issue slots and requests drop by that "
              "factor; the low end assumes the loads stay latency-bound (fewer, wider loads still "
              "wait once)",
        evaluate=acc.narrow_loads),
    Rule(
        id="kernarg-loads", title="kernel arguments read in separate round trips", kind=Kind.CODE,
        reads=("waits", "instructions"), optional_reads=("loops",),
        thresholds=dict(_WAIT_THRESHOLDS),
        fix="Batch the kernel-argument loads: keep the fields the kernel needs next to each other in "
            "the argument struct and read them with one wide s_load_dwordx8/x16 waited on once, or "
            "preload them into SGPRs (gfx940+: LLVM -amdgpu-kernarg-preload-count=N); start work that "
            "needs no argument (workgroup-id arithmetic) before that single wait.",
        removable=(0.0, 0.0),  # computed per dispatch from the number of separate waits
        basis="batching N waits into one leaves one round trip ((N-1)/N goes; half of that at the low "
              "end); preloading removes the last one",
        evaluate=ka.kernarg_loads),
    Rule(
        id="store-gated-vmcnt", title="vmcnt wait gated by older stores", kind=Kind.CODE,
        reads=("waits",), optional_reads=("loops", "instructions"),
        thresholds={},
        fix="Issue the loads the consumer needs before the stores (move the stores below the loads, "
            "or below the s_waitcnt), so the counted vmcnt(N) no longer covers the stores; in a loop, "
            "store the previous iteration's results after issuing this iteration's loads.",
        removable=(0.5, 0.9),
        basis="with the stores issued after the loads, the wait no longer waits for their write "
              "acknowledgements; the low end allows for stores that must stay first (the loads read "
              "what they write)",
        evaluate=st.store_gated_vmcnt),
    Rule(
        id="valu-dependency-chain", title="s_nop padding in VALU dependency chains", kind=Kind.CODE,
        reads=("instructions",), optional_reads=("loops",),
        thresholds={},
        fix="Interleave independent chains (process two or more elements per lane and alternate "
            "their v_cmp/v_cndmask steps), use packed ops (v_pk_*) so one instruction covers two "
            "values, or replace compare+select sequences by v_med3/v_max/v_min where the logic allows; "
            "the compiler then fills the wait states with useful work instead of s_nop.",
        removable=(0.4, 0.9),
        basis="the s_nop cycles are idle issue slots; independent instructions fill them (the low end "
              "assumes too few independent chains to fill every slot)",
        evaluate=hz.valu_dependency_chain),
    Rule(
        id="spin-wait-barrier", title="barrier held by a wave spinning on a flag", kind=Kind.CODE,
        reads=("loops", "instructions", "stall_by_category"), optional_reads=(),
        thresholds={"spin_min_share": spin.SPIN_MIN_SHARE},
        fix="Do not balance the waves: the barrier waits for another workgroup's signal. Make the "
            "signal come sooner (fewer K splits, or schedule the tiles so the partial results the "
            "fix-up waits for are produced first), let only the fix-up workgroup wait and only after "
            "its own work, add s_sleep to the poll loop so the poll does not steal issue slots, or drop "
            "the flag (atomic accumulation into the output when the summation order may vary).",
        removable=(0.1, 0.5),
        basis="the wait lasts until the producing workgroup finishes; reordering or fewer splits "
              "shortens it, it does not disappear",
        evaluate=spin.spin_wait_barrier),
    Rule(
        id="register-spill", title="register spills reloaded from scratch inside the loop", kind=Kind.CODE,
        reads=("waits", "instructions", "loops"), optional_reads=("occupancy",),
        thresholds={},
        fix="Keep the spilled values in registers: shrink what each wave holds live across the loop "
            "(a smaller per-wave tile or fewer accumulators, fewer prefetch buffers in VGPRs, data "
            "read once staged in LDS, cheap addresses recomputed instead of held), or trade a wave "
            "per SIMD for the registers where fewer waves still hide the latency; never force a lower "
            "register cap (launch bounds, waves-per-eu): it adds spills.",
        removable=(0.5, 0.9),
        basis="without the reloads their vmcnt waits go, and the older loads they drained (the "
              "prefetch) stay in flight; the low end allows for the registers being found by work "
              "that costs elsewhere (recomputation, LDS traffic, a smaller tile)",
        evaluate=spill.register_spill),
    Rule(
        id="conservative-drain", title="wait drains loads its consumers do not need yet", kind=Kind.CODE,
        reads=("waits", "instructions"), optional_reads=("loops",),
        thresholds=dict(_WAIT_THRESHOLDS),
        fix="Wait only for what the next instructions read: replace the full drain by a counted "
            "s_waitcnt vmcnt(k)/lgkmcnt(k) that leaves the k newest loads in flight (issue the loads "
            "in the order they are consumed so the count works), and wait for the rest right before "
            "their own use.",
        removable=(0.5, 0.9),
        basis="the newest loads keep flying while the consumer of the older ones runs; what stays "
              "exposed is their latency beyond that work",
        evaluate=drain.conservative_drain),
    Rule(
        id="load-in-mfma-loop", title="global load waited on inside the MFMA loop", kind=Kind.CODE,
        reads=("waits", "loops", "instructions"), optional_reads=(),
        thresholds=dict(_WAIT_THRESHOLDS),
        fix="Software-pipeline the loop: issue the global loads for iteration i+1 before the MFMAs "
            "of iteration i (double-buffer the destination registers or LDS), and wait with a "
            "counted s_waitcnt vmcnt(N) only for the data the next MFMAs need.",
        removable=(0.5, 0.9),
        basis="prefetching one iteration ahead overlaps the load with a whole iteration of MFMAs; "
              "the part that stays exposed is the iteration being shorter than the memory latency",
        evaluate=wr.load_in_mfma_loop),
    Rule(
        id="lds-read-before-mfma", title="LDS read waited on right before its MFMA", kind=Kind.CODE,
        reads=("waits", "instructions"), optional_reads=(),
        thresholds={**_WAIT_THRESHOLDS, "lds_mfma_window_instructions": wr.LDS_MFMA_WINDOW_INSTRUCTIONS},
        fix="Read the LDS fragments for the next MFMA group before issuing the current MFMAs "
            "(ping-pong register fragments), and wait with lgkmcnt(N) so the first MFMAs start while "
            "later reads are in flight.",
        removable=(0.5, 0.9),
        basis="LDS latency (~tens of cycles) is shorter than a group of MFMAs, so reading one group "
              "ahead hides most of it",
        evaluate=wr.lds_read_before_mfma),
    Rule(
        id="back-to-back-loads", title="loads issued back to back with no compute in between",
        kind=Kind.CODE, reads=("waits", "instructions"), optional_reads=(),
        thresholds={**_WAIT_THRESHOLDS, "min_loads": wr.BACK_TO_BACK_MIN_LOADS,
                    "slack_instructions": wr.BACK_TO_BACK_SLACK_INSTRUCTIONS},
        fix="Interleave independent compute between the loads and their wait (issue the loads "
            "earlier, or move work that does not need them above the s_waitcnt), and replace the "
            "single vmcnt(0) by counted waits so compute on the first load starts while the rest arrive; "
            "when there is no independent work (streaming kernels), give each wave more independent "
            "loads in flight (several elements per thread, or more waves).",
        removable=(0.3, 0.7),
        basis="the loads already overlap each other; only the latency of the last one can be "
              "hidden, by as much independent work as exists before the use",
        evaluate=wr.back_to_back_loads),
    Rule(
        id="short-load-distance", title="load issued too close to its use", kind=Kind.CODE,
        reads=("waits", "instructions"), optional_reads=(),
        thresholds=dict(_WAIT_THRESHOLDS),
        fix="Hoist the load: issue it as early as its address is known (kernel start, or one loop "
            "iteration ahead), keep the data in registers, and put the s_waitcnt just before the "
            "first use.",
        removable=(0.4, 0.9),
        basis="these loads depend on nothing late, so most of their latency can be covered by "
              "moving them up; the low end assumes only part of the distance is available",
        evaluate=wr.short_load_distance),
    Rule(
        id="lgkm-cross-lane", title="lgkmcnt waits are lane-shuffle reductions", kind=Kind.CODE,
        reads=("lgkm_breakdown",), optional_reads=("waits",),
        thresholds={"cross_lane_min_share": lgkm.CROSS_LANE_MIN_SHARE},
        fix="Replace ds_bpermute/ds_swizzle reduction steps with DPP row operations or "
            "v_permlane*_swap (gfx950), or cut the number of serial shuffle steps (reduce in "
            "registers first, shuffle once).",
        removable=(0.3, 0.8),
        basis="DPP/permlane forms complete in the VALU pipe without an lgkmcnt round trip; "
              "the remaining cost is the reduction arithmetic itself",
        evaluate=lgkm.lgkm_cross_lane),
    Rule(
        id="mfma-dependency-chain", title="MFMA waits on the result of the MFMA just before it",
        kind=Kind.CODE, reads=("instructions",), optional_reads=(),
        thresholds={"min_stall_per_hit": cmp.MFMA_CHAIN_MIN_STALL_PER_HIT,
                    "lookback_instructions": cmp.MFMA_CHAIN_LOOKBACK_INSTRUCTIONS},
        fix="Interleave independent MFMAs (other output tiles) between dependent ones, or split the "
            "accumulation into two register sets that are added at the end.",
        removable=(0.5, 0.9),
        basis="with enough independent MFMAs in between the dependent one issues back to back; "
              "the low end covers loops with too few independent tiles",
        evaluate=cmp.mfma_dependency_chain),
    Rule(
        id="legacy-mfma-shape", title="older MFMA shape running below the target's peak", kind=Kind.CODE,
        reads=("instructions", "arch"), optional_reads=(),
        thresholds={},
        fix="Switch to the target's newer MFMA shape for the same data type (more K per instruction "
            "at a higher rate; the arch table names it per shape).",
        removable=(0.15, 0.5),
        basis="the target is the matrix-core time of these instructions (executions x passes x 4 "
              "cycles); the newer shape divides it by the rate ratio (high end = 1 - 1/ratio); the "
              "low end assumes most MFMA time already overlaps memory waits",
        evaluate=cmp.legacy_mfma_shape, gain=REMOVES_COMPUTE),
    Rule(
        id="occupancy-vgpr", title="VGPR-limited occupancy in a latency-bound kernel", kind=Kind.CODE,
        reads=("occupancy", "stall_by_category"), optional_reads=("instruction_mix",),
        thresholds={"min_wait_share": res.OCCUPANCY_MIN_WAIT_SHARE,
                    "min_achieved_fraction": res.OCCUPANCY_MIN_ACHIEVED_FRACTION},
        fix="Lower the VGPR count to the next step so one more wave fits per SIMD.",
        removable=(0.0, 0.0),  # computed per dispatch from the wave count
        basis="one more wave hides at most 1/(W+1) of the memory-wait stall",
        evaluate=res.occupancy_vgpr),
    Rule(
        id="occupancy-grid", title="the grid gives each SIMD fewer waves than the kernel could hold",
        kind=Kind.LAUNCH, reads=("occupancy", "stall_by_category"), optional_reads=(),
        thresholds={"min_wait_share": res.OCCUPANCY_MIN_WAIT_SHARE,
                    "min_achieved_fraction": res.OCCUPANCY_MIN_ACHIEVED_FRACTION},
        fix="Launch more waves per CU: a persistent kernel launches CUs x k workgroups, so raise k to "
            "the occupancy the registers and LDS allow (or launch more waves per workgroup); a "
            "non-persistent grid needs more, smaller workgroups (smaller tiles, split-K).",
        removable=(0.0, 0.0),  # computed per dispatch from the waves the grid gives
        basis="going from the grid's waves/SIMD to the allowed ones hides at most that share of the "
              "memory-wait stall",
        evaluate=res.occupancy_grid),
    Rule(
        id="occupancy-lds", title="LDS-limited occupancy in a latency-bound kernel", kind=Kind.CODE,
        reads=("occupancy", "stall_by_category"), optional_reads=(),
        thresholds={"min_wait_share": res.OCCUPANCY_MIN_WAIT_SHARE,
                    "min_achieved_fraction": res.OCCUPANCY_MIN_ACHIEVED_FRACTION},
        fix="Reduce LDS per workgroup (smaller tiles, fewer pipeline stages in LDS, reuse one buffer "
            "for two phases, drop padding that is not needed against bank conflicts).",
        removable=(0.0, 0.0),  # computed per dispatch from the wave count
        basis="one more wave hides at most 1/(W+1) of the memory-wait stall",
        evaluate=res.occupancy_lds),
    Rule(
        id="barrier-dominated", title="workgroup waits at s_barrier for its slowest wave", kind=Kind.CODE,
        reads=("stall_by_category", "instructions"), optional_reads=("barriers",),
        thresholds={"min_barrier_share": res.BARRIER_MIN_SHARE},
        fix="Balance work across the waves of the workgroup, move the loads a wave waits on before "
            "the barrier earlier, and cut barriers per iteration (double-buffered LDS needs one "
            "barrier per iteration instead of two).",
        removable=(0.25, 0.6),
        basis="barrier stall is the gap to the slowest wave; balancing removes part of the gap, "
              "the slowest wave's own work stays",
        evaluate=res.barrier_dominated),
    Rule(
        id="pingpong-barrier", title="ping-pong barrier after an MFMA cluster", kind=Kind.CODE,
        reads=("instructions", "loops", "stall_by_category"), optional_reads=("barriers",),
        thresholds={"ahead_share_low": pp.PINGPONG_AHEAD_SHARE[0], "ahead_share_high": pp.PINGPONG_AHEAD_SHARE[1]},
        fix="Balance the two halves: the memory phase of one half must fit under the MFMA cluster of "
            "the other. Move global loads and LDS writes out of the long memory phase (issue them in "
            "the previous MFMA phase, a deeper LDS pipeline), split the memory phase over two MFMA "
            "clusters, or give each MFMA cluster more work (larger per-wave tile) so it covers the "
            "loads. The barriers after a memory phase are the schedule working: leave them.",
        removable=(0.4, 1.0),
        basis="a wait released by the other half's memory phase is that phase outrunning this half's "
              "MFMA cluster: a memory phase that fits under the cluster removes all of it; the low end "
              "cuts only the phase's long tail (its LDS time varies per iteration)",
        evaluate=pp.pingpong_barrier),
    Rule(
        id="store-epilogue", title="store epilogue: narrow or row-strided output stores", kind=Kind.CODE,
        reads=("instructions", "stall_by_category"), optional_reads=("waits", "loops"),
        thresholds={"store_epilogue_min_share": epi.STORE_EPILOGUE_MIN_SHARE, "wide_bytes": acc.WIDE_BYTES},
        fix="Write the tile so each lane stores 16 contiguous bytes of one row (transpose in "
            "registers or through LDS, pack and convert first).",
        removable=(0.0, 0.0),  # computed per dispatch from the store width
        basis="wider, row-contiguous stores cut the store instructions and the partial-line writes",
        evaluate=epi.store_epilogue),
    Rule(
        id="source-collapse", title="one source line holds most of the stall (attribution artifact)",
        kind=Kind.CAPTURE, reads=("findings",), optional_reads=("source_lines",),
        thresholds={},
        fix="Read the instruction view (hotspot analyze --mode asm) for this line, rebuild with line "
            "tables (hipcc/clang: -gline-tables-only or -g; Triton/FlyDSL: their debug line-info "
            "option) and re-capture.",
        removable=(0.0, 0.0),
        basis="no speed-up by itself: it makes the line-level plan usable",
        evaluate=cap.source_collapse),
    Rule(
        id="idle-slice", title="the capture saw only a sliver of the kernel", kind=Kind.CAPTURE,
        reads=("findings",), optional_reads=(),
        thresholds={},
        fix="Re-capture with another att_target_cu or att_shader_engine_mask, a larger grid, or a "
            "later kernel_iteration_range (a SET of iterations, e.g. \"[3]\"), so the traced CU runs "
            "full waves; then re-plan.",
        removable=(0.0, 0.0),
        basis="no speed-up by itself: the numbers of this capture do not represent the kernel",
        evaluate=cap.idle_slice),
) + tuple(
    Rule(
        id=f"pmc-{vid}", title=title, kind=Kind.MEMORY, reads=("pmc", "stall_by_category"),
        optional_reads=("instructions",), thresholds=thresholds,
        fix=fix, removable=removable, basis=basis, evaluate=mem.memory_rule(vid), gain=gain)
    for vid, title, thresholds, fix, removable, basis, gain in (
        ("over-fetch", "the kernel reads more bytes than it needs (counters)",
         {"over_fetch_ratio_max": pv.OVER_FETCH_RATIO_MAX},
         "Remove the redundant reads:", (0.5, 1.0),
         "the redundant share of bytes, applied to the memory stall", REMOVES_BYTES),
        ("partial-lines", "partial-line (32 B) fabric requests (counters)",
         {"partial_lines_32b_pct_min": pv.PARTIAL_LINES_32B_PCT_MIN},
         "Make each wave read whole 128 B lines:", (0.1, 0.4),
         "partial lines waste fabric bandwidth; the memory stall shrinks by part of the wasted share",
         REMOVES_BYTES),
        ("below-peak", "fabric bandwidth well below peak (counters)",
         {"below_peak_pct_max": pv.BELOW_PEAK_PCT_MAX},
         "Keep more bytes in flight:", (0.1, 0.4),
         "more loads in flight shorten the memory waits of a latency-bound kernel", HIDES_LATENCY),
        ("reuse-available", "L2 serves most requests, bandwidth is not the limit (counters)",
         {"reuse_hit_pct_min": pv.REUSE_HIT_PCT_MIN, "below_peak_pct_max": pv.BELOW_PEAK_PCT_MAX},
         "Treat it as latency-bound:", (0.05, 0.25),
         "latency hiding, not bandwidth, is the lever; the range is deliberately small", HIDES_LATENCY),
        ("near-peak", "fabric bandwidth near peak (counters)",
         {"near_peak_pct_min": pv.NEAR_PEAK_PCT_MIN},
         "Only fewer bytes help:", (0.0, 0.0),
         "informational: at the roof, the saving depends on bytes removed, which the counters cannot tell", HIDES_LATENCY),
        ("streaming", "streaming access, little L2 reuse (counters)",
         {"streaming_hit_pct_max": pv.STREAMING_HIT_PCT_MAX},
         "Check whether reuse is possible:", (0.0, 0.0),
         "informational: says which lever is left, no direct saving", HIDES_LATENCY),
    )
)

RULES_BY_ID = {r.id: r for r in RULES}
