"""Choosing the kernel to trace from a discovery run's kernel table.

The ranking itself (calls, totals, % of GPU time, escaped regex) comes from hotspot.trace; this
module only decides which row to trace and says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.trace.model import KernelRow as TraceKernelRow

# Runtime plumbing, not the user's compute: HIP runtime blit kernels (rocclr copy/fill) and PyTorch's
# fill/copy element-wise kernels. Extend with --skip REGEX.
DEFAULT_PLUMBING: tuple[str, ...] = (
    r"__amd_rocclr_",                                   # HIP runtime copy/fill/blit kernels
    r"at::native::.*(FillFunctor|fill_kernel|fill_)",   # torch.fill_/zeros/ones
    r"at::native::.*(copy_kernel|CopyFunctor|direct_copy_kernel|copy_device_to_device)",
    r"at::native::.*(_to_copy|copy_)",
)
SHOWN_KERNELS = 10  # rows of the discovery table printed and kept in the summary


@record
class KernelRow:
    name: str
    calls: int
    total_ns: int | float
    avg_ns: float
    pct: float
    regex: str
    family: str | None = None


@record
class Choice:
    kernel: KernelRow
    reason: str
    skipped: tuple[tuple[str, str], ...]  # (name, the plumbing pattern that matched)


def to_rows(kernels: Sequence[TraceKernelRow]) -> list[KernelRow]:
    """Rows of hotspot.trace.api.kernel_table, already ranked by total time."""
    return [KernelRow(name=r.name, calls=r.calls, total_ns=r.total_ns, avg_ns=float(r.avg_ns),
                      pct=float(r.pct or 0.0), regex=r.regex, family=r.family) for r in kernels]


def plumbing_match(name: str, patterns: tuple[str, ...]) -> str | None:
    for pat in patterns:
        if re.search(pat, name):
            return pat
    return None


def choose_kernel(rows: list[KernelRow], extra_skip: tuple[str, ...] = ()) -> Choice | None:
    """The first row (highest total GPU time) that is not runtime plumbing."""
    patterns = DEFAULT_PLUMBING + tuple(extra_skip)
    skipped: list[tuple[str, str]] = []
    for row in rows:
        pat = plumbing_match(row.name, patterns)
        if pat is not None:
            skipped.append((row.name, pat))
            continue
        rank = len(skipped) + 1
        reason = (f"highest total GPU time among non-plumbing kernels ({row.pct:.1f}% of GPU time, "
                  f"{row.calls} calls, {row.avg_ns:,.0f} ns average)")
        if skipped:
            reason += f"; ranked #{rank} overall, {len(skipped)} kernel(s) above it skipped as runtime plumbing"
        return Choice(row, reason, tuple(skipped))
    return None
