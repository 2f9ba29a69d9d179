"""Verdicts per kernel, following the decision guide in HARDWARE.md §6. Pure: metrics in, verdicts out.

A verdict whose condition depends on a missing counter (the estimate is a range that straddles the
threshold) is still reported, with `certain: false` and the counter that would decide it.
"""

from __future__ import annotations

from dataclasses import field

from hotspot.pmc.estimate import Estimate
from hotspot.record import record

# Below 5% L2 hits nearly every byte comes from the fabric once: a streaming access (HARDWARE.md §6).
STREAMING_HIT_PCT_MAX = 5.0
# Coalesced streams issue almost no 32 B requests; a quarter of requests being partial lines is a
# layout problem (scattered or misaligned access), not noise.
PARTIAL_LINES_32B_PCT_MIN = 25.0
# Reading more than 1.25x the bytes the algorithm needs means redundant reads (issue 4 scope).
OVER_FETCH_RATIO_MAX = 1.25
# Within 10% of 1.0 the kernel reads each needed byte about once: "over-fetch ≈ 1" in the guide.
CLEAN_OVER_FETCH_MAX = 1.1
# Streaming kernels reach about 80% of theoretical HBM peak; 70% of the chosen peak is close to
# the practical roof, so only fewer bytes help.
NEAR_PEAK_PCT_MIN = 70.0
# Under half the peak a memory-bound kernel is not using the fabric fully (a paged gather still
# reaches 50-60%, HARDWARE.md §6).
BELOW_PEAK_PCT_MAX = 50.0
# When most requests hit L2, fabric bandwidth is not what limits the kernel.
REUSE_HIT_PCT_MIN = 50.0

THRESHOLDS: dict[str, float] = {
    "streaming_hit_pct_max": STREAMING_HIT_PCT_MAX,
    "partial_lines_32b_pct_min": PARTIAL_LINES_32B_PCT_MIN,
    "over_fetch_ratio_max": OVER_FETCH_RATIO_MAX,
    "clean_over_fetch_max": CLEAN_OVER_FETCH_MAX,
    "near_peak_pct_min": NEAR_PEAK_PCT_MIN,
    "below_peak_pct_max": BELOW_PEAK_PCT_MAX,
    "reuse_hit_pct_min": REUSE_HIT_PCT_MIN,
}


@record
class Verdict:
    id: str
    text: str
    evidence: dict[str, float | Estimate | None]  # measured values, thresholds, estimates
    next: str
    certain: bool = True
    undecided_by: list[str] = field(default_factory=list)  # counters that would settle it


@record
class KernelFacts:
    """What the rules look at, for one kernel (sums over its dispatches)."""

    l2_hit_pct: float | None
    req_32b_pct: float | None
    over_fetch: Estimate
    pct_of_peak: Estimate
    achieved_gbps: Estimate
    peak_gbps: float | None


def _range_text(e: Estimate, fmt: str, unit: str = "") -> str:
    if e.exact:
        return f"{e.value:{fmt}}{unit}"
    return f"{e.low:{fmt}}–{e.high:{fmt}}{unit}"


def verdicts_for(f: KernelFacts) -> list[Verdict]:
    out: list[Verdict] = []
    hit = f.l2_hit_pct

    if hit is not None and hit < STREAMING_HIT_PCT_MAX:
        clean_fetch = f.over_fetch.holds(lambda r: r <= CLEAN_OVER_FETCH_MAX)
        clean_layout = f.req_32b_pct is not None and f.req_32b_pct < PARTIAL_LINES_32B_PCT_MIN
        evidence: dict[str, float | Estimate | None] = {"l2_hit_pct": hit, "threshold_pct": STREAMING_HIT_PCT_MAX,
                                    "req_32b_pct": f.req_32b_pct}
        if clean_fetch and clean_layout:
            text = ("clean streaming: L2 hit rate below 5%, each needed byte read about once, "
                    "full-line requests")
            nxt = ("the achieved bandwidth is the ceiling of this access pattern; only reading fewer "
                   "bytes (smaller types, fusion) makes it faster")
        else:
            text = f"streaming: L2 hit rate {hit:.1f}% — almost every request goes to the fabric"
            nxt = ("if the data is reused across workgroups or tiles, reorder the work so the reuse "
                   "happens while lines are still in L2")
            if not f.over_fetch.known:
                nxt += "; give --ideal-bytes to check for redundant reads"
        out.append(Verdict("streaming", text, evidence, nxt))

    if f.req_32b_pct is not None and f.req_32b_pct >= PARTIAL_LINES_32B_PCT_MIN:
        out.append(Verdict(
            "partial-lines",
            f"partial lines: {f.req_32b_pct:.1f}% of fabric read requests are 32 B",
            {"req_32b_pct": f.req_32b_pct, "threshold_pct": PARTIAL_LINES_32B_PCT_MIN},
            "fix the access layout: make each wave read whole, aligned 128 B lines (contiguous "
            "lanes, 16 B vector loads); look for strided or misaligned tensors"))

    over = f.over_fetch.holds(lambda r: r > OVER_FETCH_RATIO_MAX)
    if f.over_fetch.known and over is not False:
        out.append(Verdict(
            "over-fetch",
            f"over-fetch: the kernel reads {_range_text(f.over_fetch, '.2f', 'x')} the ideal bytes",
            {"over_fetch": f.over_fetch, "threshold_ratio": OVER_FETCH_RATIO_MAX},
            "find the redundant reads: reuse across workgroups or tiles is missing (re-read "
            "operands, overlapping halos); enlarge tiles or reorder workgroups",
            certain=over is True, undecided_by=list(f.over_fetch.missing) if over is None else []))

    near = f.pct_of_peak.holds(lambda p: p >= NEAR_PEAK_PCT_MIN)
    below = f.pct_of_peak.holds(lambda p: p < BELOW_PEAK_PCT_MAX)
    bw_evidence = {"achieved_gbps": f.achieved_gbps, "peak_gbps": f.peak_gbps,
                   "pct_of_peak": f.pct_of_peak}
    undecided = list(f.pct_of_peak.missing)
    if f.pct_of_peak.known and near is not False:
        out.append(Verdict(
            "near-peak",
            f"near peak: {_range_text(f.pct_of_peak, '.0f', '%')} of the peak fabric bandwidth",
            {**bw_evidence, "threshold_pct": NEAR_PEAK_PCT_MIN},
            "bandwidth-bound at the roof: only moving fewer bytes helps (smaller types, fusion, "
            "better reuse)", certain=near is True, undecided_by=undecided if near is None else []))
    reuse = hit is not None and hit >= REUSE_HIT_PCT_MIN
    if f.pct_of_peak.known and below is not False:
        certain = below is True
        if reuse:
            out.append(Verdict(
                "reuse-available",
                f"L2 serves {hit:.1f}% of requests and fabric bandwidth is "
                f"{_range_text(f.pct_of_peak, '.0f', '%')} of peak: not bandwidth-bound (latency or "
                f"compute limits it)",
                {**bw_evidence, "l2_hit_pct": hit, "reuse_hit_pct_min": REUSE_HIT_PCT_MIN,
                 "threshold_pct": BELOW_PEAK_PCT_MAX},
                "run `hotspot analyze` on an ATT capture: if the top stalls are memory waits (vmcnt), "
                "keep more loads in flight (occupancy, unrolling, prefetch); if they are MFMA/VALU, "
                "the kernel is compute-bound and fabric bandwidth is not the lever",
                certain=certain, undecided_by=undecided if not certain else []))
        else:
            out.append(Verdict(
                "below-peak",
                f"below peak: {_range_text(f.pct_of_peak, '.0f', '%')} of the peak fabric bandwidth",
                {**bw_evidence, "threshold_pct": BELOW_PEAK_PCT_MAX},
                "if this kernel is memory-bound, too few bytes are in flight: raise occupancy or "
                "loads per wave; if it is compute-bound, bandwidth is not its limiter",
                certain=certain, undecided_by=undecided if not certain else []))
    return out
