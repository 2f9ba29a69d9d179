"""The capture-to-capture noise floor of `hotspot diff` and the test's settings.

Two captures of one kernel binary differ by more than their traced waves' spread shows: the clock,
contention from the rest of the GPU and which CTAs were traced move every row of a capture
together. diff models that as one multiplicative factor per capture, exp(σ·z), z ~ N(0, 1), shared
by all its rows (hotspot/diff/stats.py); σ is CAPTURE_NOISE_SD unless the side's own replicate
dispatches measure otherwise (pooled with it, hotspot/diff/api.py).
"""

from __future__ import annotations

# σ of the capture factor (log scale, ≈ relative). Source: the replicate fixture
# ../shared/corpus/att/gfx950/flash_attn_replicates (3 captures of the big configuration, 2 of the
# small one, identical ISA within each): over every within-configuration pair (4 pairs) and every
# tested row (148), the smallest σ for which 95% of the rows fall inside their 95% interval,
# |L| <= 1.96·sqrt(s² + 2σ²), L the observed log ratio of the row's cycles per wave (same work) and
# s its bootstrap sd from the spread between workgroups alone. With waves resampled one by one (as
# if independent) it was 0.0325; with workgroups resampled within their launch round, the spread
# alone covers 98.0% and the smallest σ is 0 (2,000 replicates, seed 29). Kept at 0.01: the fixture
# holds one kernel, and a capture's clock and contention do move it as a whole. `python
# scripts/calibrate_diff_floor.py` recomputes it (docs/cli/diff.md, "The floor").
CAPTURE_NOISE_SD = 0.01

# Weight of the floor when replicate dispatches measure σ too, in degrees of freedom: the fixture's
# within-configuration pairs it was calibrated on.
FLOOR_DF = 4
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
# Workgroups a side needs for them to be the resampled units; with fewer (all traced waves in one
# workgroup) the waves are drawn one by one, as the only spread there is.
MIN_WORKGROUPS = 2
# When the total's interval reaches beyond ±this (fraction), the diff cannot decide changes of the
# size a kernel edit usually makes: the advice is to capture replicates.
WIDE_INTERVAL = 0.10
