"""The `kernels` command's result data (serialized by orjson in field order; base units: ns, bytes).

The dataclasses also answer `row["name"]` so callers may treat them as the JSON dicts they become.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any
from hotspot.record import record


class _Keyed:
    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


@record
class KernelResources(_Keyed):
    """Per-kernel resources from per-dispatch sources; the maximum over the kernel's dispatches."""

    vgpr: int | None
    accum_vgpr: int | None
    sgpr: int | None
    lds_bytes: int | None
    lds_includes_dynamic: bool
    scratch_bytes: int | None
    workgroup: tuple[int, int, int] | None


@record
class KernelRow(_Keyed):
    name: str
    family: str
    calls: int
    total_ns: int
    avg_ns: float
    min_ns: int
    max_ns: int
    pct: float | None        # share of the % base; None when the family is excluded from it
    regex: str
    resources: KernelResources | None = None


@record
class RegionRow(_Keyed):
    name: str
    count: int               # marker occurrences merged under this name
    start_ns: int            # first occurrence start
    end_ns: int              # last occurrence end
    wall_ns: int             # length of the union of the occurrences
    gpu_ns: int              # kernel time of dispatches starting inside an occurrence
    dispatches: int
    kernels: list[KernelRow]
    run: str | None = None   # the run's kernel-level file when a folder holds several runs


@record
class GpuRow(_Keyed):
    gpu: int | None
    agent: str | None
    dispatches: int
    gpu_ns: int


@record(frozen=False)
class KernelTable(_Keyed):
    source_kind: str
    sources: list[str]
    total_gpu_ns: int                 # sum of all kernel durations (after --gpu)
    pct_base_ns: int                  # denominator of pct (total minus excluded families)
    excluded_families: list[str]
    kernel_count: int                 # distinct kernels before --top
    dispatch_count: int
    kernels: list[KernelRow]
    gpus: list[GpuRow] = field(default_factory=list)
    regions: list[RegionRow] | None = None
    outside_regions_gpu_ns: int | None = None
