"""The typed model every kernel-level reader produces: dispatches, markers and stats rows."""

from __future__ import annotations

from hotspot.record import record



@record
class DispatchRecord:
    """One kernel dispatch as a trace reader saw it. None = the source does not record the field."""

    kernel_name: str
    dispatch_id: int | None
    start_ns: int | None
    end_ns: int | None
    agent: str | None          # the source's agent label, e.g. "Agent 4" (CSV) or "gfx942" (rocpd)
    gpu_id: int | None         # GPU ordinal: rocpd agent type index, rocm-trace-lite gpuId; None in CSV
    vgpr: int | None           # architected VGPRs (accum_offset on gfx90a/gfx94x)
    accum_vgpr: int | None
    sgpr: int | None
    lds_bytes: int | None
    lds_includes_dynamic: bool  # rocpd lds_size includes dynamic LDS; CSV LDS_Block_Size is static only
    scratch_bytes: int | None
    workgroup: tuple[int, int, int] | None
    grid: tuple[int, int, int] | None
    source: str                # "<kind>:<path>", e.g. "kernel_trace.csv:/runs/x_kernel_trace.csv"
    # where in the source the row is: the CSV line (header = line 1) or the rocpd `kernels` row id,
    # so every launch-derived value can name the row it came from
    row: int | None = None

    @property
    def duration_ns(self) -> int | None:
        if self.start_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.start_ns

    @property
    def agent_number(self) -> int | None:
        """The number in a CSV agent label ("Agent 4" -> 4), used by --gpu on CSV inputs."""
        if self.agent is None:
            return None
        digits = self.agent.rsplit(" ", 1)[-1]
        return int(digits) if digits.isdigit() else None


@record
class MarkerRecord:
    """One roctx range (push/pop or start/stop) on the host timeline, in ns."""

    name: str
    start_ns: int
    end_ns: int
    source: str

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@record
class KernelStatRecord:
    """One row of a rocprofv3 `*_kernel_stats.csv` (already aggregated by the profiler)."""

    name: str
    calls: int
    total_ns: int
    avg_ns: float
    pct: float
    min_ns: int
    max_ns: int
    stddev_ns: float
    source: str
