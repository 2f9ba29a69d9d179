"""L2→fabric read bytes from request counters (HARDWARE.md §6). Pure: counters in, Estimate out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hotspot.arch.counter_semantics import ArchCounters
from hotspot.pmc.estimate import Estimate
from hotspot.record import record


@record
class ByteResult:
    estimate: Estimate
    inconsistent: bool   # the size-class counters exceed the request total (passes disagree)


def read_bytes(spec: ArchCounters, counters: Mapping[str, float]) -> ByteResult:
    """Bytes for one dispatch under one arch's counter semantics."""
    if spec.read_requests is None:
        return ByteResult(Estimate.unknown(reason=f"no fabric-byte formula for {spec.family}"), False)
    requests = counters.get(spec.read_requests)
    known_bytes = 0.0
    known_requests = 0.0
    unknown = []
    for size_class in spec.size_classes:
        count = counters.get(size_class.counter) if size_class.counter else None
        if count is None:
            unknown.append(size_class)
        else:
            known_bytes += count * size_class.bytes_per_request
            known_requests += count
    if not unknown:
        return ByteResult(Estimate.of(known_bytes), False)
    named_unknown = [c.counter for c in unknown if c.counter]
    if requests is None:
        return ByteResult(Estimate.unknown([spec.read_requests, *named_unknown],
                                           f"{spec.read_requests} not collected"), False)
    remainder = requests - known_requests
    inconsistent = remainder < 0
    if len(unknown) == 1:
        # The formula as documented; a negative remainder (counters from different replay passes
        # disagreeing) is kept, flagged, and never allowed to push the total below zero.
        return ByteResult(Estimate.of(max(0.0, known_bytes + remainder * unknown[0].bytes_per_request)),
                          inconsistent)
    if remainder <= 0:  # every request is counted by size: nothing left to bound
        return ByteResult(Estimate.of(known_bytes), inconsistent)
    sizes = [c.bytes_per_request for c in unknown]
    need = len(unknown) - 1
    reason = (f"{' and '.join(named_unknown)} not collected: each read request that is not counted "
              f"by size is {min(sizes)}–{max(sizes)} B")
    if need == 1 and len(named_unknown) > 1:
        reason += " (collecting any one of them makes it exact)"
    return ByteResult(Estimate.between(known_bytes + remainder * min(sizes),
                                       known_bytes + remainder * max(sizes), named_unknown, reason),
                      inconsistent)


def read_bytes_any(specs: Sequence[ArchCounters], counters: Mapping[str, float]) -> ByteResult:
    """Bytes when the arch is undecided: the union of the candidates' estimates."""
    results = [read_bytes(s, counters) for s in specs]
    if len(results) == 1:
        return results[0]
    if not results or not all(r.estimate.known for r in results):
        missing = tuple(dict.fromkeys(m for r in results for m in r.estimate.missing))
        return ByteResult(Estimate.unknown(missing, "arch undecided and counters missing"), False)
    low = min(r.estimate.low for r in results if r.estimate.low is not None)  # all: known ones
    high = max(r.estimate.high for r in results if r.estimate.high is not None)
    missing = tuple(dict.fromkeys(m for r in results for m in r.estimate.missing))
    families = "/".join(s.family for s in specs)
    inconsistent = any(r.inconsistent for r in results)
    if low == high:
        return ByteResult(Estimate.of(low), inconsistent)
    return ByteResult(Estimate(None, low, high, False, missing,
                               f"arch undecided ({families}): range covers every candidate's "
                               f"formula; pass --arch"), inconsistent)


def dram_read_bytes(spec: ArchCounters, counters: Mapping[str, float]) -> float | None:
    """DRAM-only read bytes where the arch has that counter (gfx950), else None."""
    if spec.dram is None or spec.dram.counter is None or spec.dram.counter not in counters:
        return None
    return spec.dram.bytes_per_request * counters[spec.dram.counter]
