"""Text and markdown views of a `kernels` Result (formatting only; every number comes from data)."""

from __future__ import annotations

from hotspot.render.tables import heading, num, pct, shorten_left, table
from hotspot.result import Result
from hotspot.trace.model import KernelRow, KernelTable

REGEX_SHOW_MAX = 160   # longer regexes are pointed to in JSON rather than printed
NS_PER_US = 1000.0
HEADERS = ("#", "kernel", "family", "calls", "total µs", "avg µs", "% GPU")


def _us(ns: float) -> str:
    return f"{ns / NS_PER_US:,.1f}"


def _rows(kernels: list[KernelRow]) -> list[list[str]]:
    return [[str(i), k.name, k.family, num(k.calls), _us(k.total_ns), _us(k.avg_ns),
             pct(k.pct) if k.pct is not None else "excl."] for i, k in enumerate(kernels, 1)]


def _kernel_block(kernels: list[KernelRow], md: bool) -> str:
    return table(_rows(kernels), HEADERS, markdown=md,
                 colalign=("right", "left", "left", "right", "right", "right", "right"))


def _render(result: Result[KernelTable], md: bool) -> str:
    data: KernelTable = result.data
    out = [heading(f"Kernels ({data.source_kind})", md)]
    shown = len(data.kernels)
    out.append(f"{num(data.kernel_count)} kernels, {num(data.dispatch_count)} dispatches, "
               f"{_us(data.total_gpu_ns)} µs GPU time"
               + (f"; % excludes {', '.join(data.excluded_families)} ({_us(data.pct_base_ns)} µs base)"
                  if data.excluded_families else "")
               + (f"; top {shown} shown" if shown < data.kernel_count else ""))
    if len(data.gpus) > 1:
        out.append("GPUs: " + ", ".join(f"{g.agent or g.gpu} {_us(g.gpu_ns)} µs" for g in data.gpus))
    out += ["", _kernel_block(data.kernels, md)]
    if data.regions is not None:
        for r in data.regions:
            busy = r.gpu_ns * 100.0 / r.wall_ns if r.wall_ns else 0.0
            run = f" [run {shorten_left(r.run, 40)}]" if r.run else ""
            title = (f"Region {r.name!r} x{r.count}{run}: wall {_us(r.wall_ns)} µs, GPU {_us(r.gpu_ns)} µs "
                     f"({busy:.1f}% of wall), {num(r.dispatches)} dispatches")
            out += ["", heading(title, md), "", _kernel_block(r.kernels, md)]
        if not data.regions:
            out += ["", "(no marker regions)"]
        if data.outside_regions_gpu_ns is not None:
            out += ["", f"GPU time outside the regions: {_us(data.outside_regions_gpu_ns)} µs"]
    if data.kernels:
        top = data.kernels[0]
        out.append("")
        if len(top.regex) <= REGEX_SHOW_MAX:
            quoted = top.regex.replace("'", "'\\''")
            out.append(f"next: hotspot collect --kernel '{quoted}' -- <your command>")
        else:
            out.append("next: the top kernel's regex is long; get it with "
                       "--format json | jq -r '.data.kernels[0].regex'")
    return "\n".join(out)


def render_text(result: Result[KernelTable]) -> str:
    return _render(result, md=False)


def render_markdown(result: Result[KernelTable]) -> str:
    return _render(result, md=True)
