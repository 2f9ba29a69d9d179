"""The capture-to-capture noise floor of `hotspot diff` and the test's settings.

Two captures of one kernel binary differ by more than their traced waves' spread shows: the clock,
contention from the rest of the GPU and which CTAs were traced move every row of a capture
together. diff models that as one multiplicative factor per capture, exp(σ·z), z ~ N(0, 1), shared
by all its rows (hotspot/diff/stats.py); σ is CAPTURE_NOISE_SD unless the side's own replicate
dispatches measure more (pooled with it, hotspot/diff/api.py). σ is an estimate with FLOOR_DF
degrees of freedom, plugged in as known (see FLOOR_CAPTURES). Every setting below is a
choice of the test (its level, replicates, seed) or carries the measurement it comes from.
"""

from __future__ import annotations

import math

# The floor, measured: what replicate dispatches measure (hotspot/diff/api.py `_replicate_sd`: the
# sample sd of log(total stall / executed instructions) between captures of one binary), on the
# replicate fixture ../shared/corpus/att/gfx950/flash_attn_replicates/big: 3 captures of the same
# binary and configuration, 32 traced waves (8 workgroups) each. Per capture (`hotspot analyze DIR
# --format json`: data.totals.stall, data.totals.hit). `python scripts/calibrate_diff_floor.py`
# recomputes the rows from the corpus; tests/test_diff_calibration.py checks they still agree.
# The fixture's small configuration is left out: its 2 captures traced 4 and 12 waves (1 and 3
# workgroups), so their totals differ by which workgroup was traced (sd 0.083), which the per-wave
# resampling measures on each side, not by the capture. Three captures give σ little precision:
# its 95% confidence interval with 2 degrees of freedom is about [0.53%, 6.3%]. The test treats it
# as known (a plug-in: drawn as Student's t with its 2 df, the floor alone is ±6.1% at 95%, which
# says more about three captures than about the hardware, and a planted +10% slowdown of the main
# loop of a real capture is no longer called a change). The script's coverage check (the spread
# alone covers 98% of the fixture's 113 tested rows) is 3 correlated pairs of one kernel: it does
# not contradict the floor there, it does not bound it elsewhere. A kernel that varies more run to
# run needs replicate dispatches (rocprofv3 --iterations): their measured spread, pooled with the
# floor, replaces it when larger. A saved analysis (no per-wave values) is tested on the floor
# alone, totals only (the floor is measured on them).
FLOOR_CAPTURES: tuple[tuple[str, int, int], ...] = (
    # (capture, total stall cycles, executed instructions)
    ("ui_output_agent_25171_dispatch_44", 1_855_016, 353_256),
    ("ui_output_agent_27340_dispatch_44_after_loc_fix", 1_863_676, 353_256),
    ("ui_output_agent_34195_dispatch_44_after_loc_fix", 1_637_896, 305_936),
)


def _sd_of_log_rates(rows: tuple[tuple[str, int, int], ...]) -> float:
    logs = [math.log(stall / hits) for _name, stall, hits in rows]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))


# σ of the capture factor (log scale, ≈ relative): 0.0101 from the rows above
CAPTURE_NOISE_SD = _sd_of_log_rates(FLOOR_CAPTURES)
# Degrees of freedom of the floor's estimate (3 captures): its weight when a side's replicate
# dispatches measure σ too.
FLOOR_DF = len(FLOOR_CAPTURES) - 1

# Dispatches of the chosen kernel read per side (rocprofv3 --iterations): their waves are pooled
# and their spread updates the floor.
MAX_REPLICATES = 4

# Bootstrap replicates per diff; the seed is fixed (and printed in the JSON) so a diff is
# reproducible, and can be changed with --seed.
REPLICATES = 2000
DEFAULT_SEED = 29
# Confidence level of the intervals; rows with a q-value at or under 1 - level are significant.
LEVEL = 0.95
# A row under this fraction of the total stall on both sides is not tested: it cannot move the
# kernel, and testing it would only widen the false-discovery correction.
MIN_SHARE_OF_TOTAL = 0.005
# Traced waves a side needs for its rows to be tested: fewer cannot show their own spread (two
# waves may be two of a kind: split in halves, the 4 waves of the corpus ck_bmm GEMM give halves whose
# waves agree within each half and differ by 50% between them).
MIN_WAVES = 4
# Waves of one workgroup are launched on their CU back to back: in every corpus capture the waves of
# a workgroup begin within 16 cycles of each other and the next workgroup on that CU at least 100
# cycles later (flash_attn_replicates: 4-wave groups 4-12 cycles apart, groups 116-128 apart;
# triton_gemm_early3: 8-wave groups within 36, rounds ~110,000 apart). A wave beginning within this
# many cycles of the previous wave on its CU joins its workgroup (hotspot/diff/workgroups.py).
WORKGROUP_LAUNCH_GAP = 64
# A row executed at most this many times per wave (on both sides) runs once per wave: prologue and
# kernel-argument loads, epilogue stores. It gets a floor of its own (hotspot/diff/api.py
# `_own_floors`): its cost follows the capture's cold or warm memory state, not the waves' spread.
COLD_EXECUTIONS_PER_WAVE = 1.0
# Workgroups a side needs for its rows to be tested: the waves of one workgroup share its work and
# show none of the spread between workgroups that a recapture meets (hotspot/diff/api.py). Without
# placement (no SE/CU per wave) the waves are drawn one by one.
MIN_WORKGROUPS = 2
# When the total's interval reaches beyond ±this (fraction), the diff cannot decide changes of the
# size a kernel edit usually makes: the advice is to capture replicates.
WIDE_INTERVAL = 0.10
