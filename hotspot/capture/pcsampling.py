"""PC-sampling code.json columns: samples instead of cycles."""

from __future__ import annotations

# Order of the per-instruction `Stall_Reasons` / `NotIssuedReasons` list. Source: rocprofiler-sdk
# `rocprofiler_pc_sampling_instruction_not_issued_reason_t` (NONE first). The corpus file's lists
# have exactly these 10 entries and each list sums to the row's stalled-sample count.
NOT_ISSUED_REASONS: tuple[str, ...] = (
    "none", "no-instruction-available", "alu-dependency", "waitcnt", "internal-instruction",
    "barrier-wait", "arbiter-not-win", "arbiter-win-ex-stall", "other-wait", "sleep-wait",
)

# Column names used by the two known writer versions.
ISSUED_COLUMNS = ("PC_Issued", "Issued")
STALLED_COLUMNS = ("PC_Stalled", "Stalled")
REASON_COLUMNS = ("Stall_Reasons", "NotIssuedReasons")


def first_present(names: tuple[str, ...], candidates: tuple[str, ...]) -> str | None:
    lowered = {n.lower(): n for n in names}
    for c in candidates:
        if c.lower() in lowered:
            return lowered[c.lower()]
    return None
