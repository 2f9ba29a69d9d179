"""Typed, immutable model of counter inputs: what the readers produce and the analysis consumes."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping
from hotspot.record import record


@record
class DispatchCounters:
    """One kernel dispatch from one input file. A counter absent from `counters` was not collected."""

    dispatch_id: int
    kernel: str
    counters: Mapping[str, float]       # canonical `_sum` name -> value summed over instances
    start_ns: float | None = None
    end_ns: float | None = None

    @property
    def duration_ns(self) -> float | None:
        if self.start_ns is None or self.end_ns is None or self.end_ns <= self.start_ns:
            return None
        return self.end_ns - self.start_ns


@record
class ArchHint:
    arch: str
    source: str                         # e.g. "sysinfo.csv gpu_arch"
    product: str | None = None          # product/model name when the source gives one


@record
class PeakHint:
    gbps: float
    source: str


@record
class CounterFile:
    path: Path
    layout: str                         # counter_collection_csv | rocprof_compute_wide | ..._long | rocpd
    dispatches: tuple[DispatchCounters, ...]
    counter_names: frozenset[str]       # every counter name seen (as written in the file)
    all_zero: bool                      # every counter value read from the file is 0
    arch_hints: tuple[ArchHint, ...] = ()
    peak_hints: tuple[PeakHint, ...] = ()   # measured (roofline) first, then sysinfo
    product_names: tuple[str, ...] = ()     # for the product-table peak fallback
    warnings: tuple[str, ...] = ()          # e.g. identical duplicate rows kept once
