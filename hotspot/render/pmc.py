"""Text and markdown views of the `pmc` Result. Formatting only: every number comes from the Result."""

from __future__ import annotations

from collections.abc import Callable

from hotspot.pmc.analysis import DispatchReport, KernelReport
from hotspot.pmc.api import PmcData
from hotspot.pmc.estimate import Estimate
from hotspot.diagnostics import terminal_width
from hotspot.kernel_names import distinct, fit_distinct
from hotspot.render.sections import Sections
from hotspot.render.tables import heading, num, pct, table
from hotspot.result import Result

COUNTER_HEADER = 24  # a kernel's name over its column of counter sums
_DECIMAL_UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"))


def _scaled(value: float, units: tuple[tuple[float, str], ...], base: str) -> tuple[float, str]:
    for scale, unit in units:
        if abs(value) >= scale:
            return value / scale, unit
    return value, base


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return ""
    v, unit = _scaled(value, _DECIMAL_UNITS, "B")
    return f"{v:,.0f} {unit}" if unit == "B" else f"{v:,.2f} {unit}"


def fmt_range(e: Estimate | None, fmt: Callable[[float], str]) -> str:
    """An Estimate as 'x' (exact), 'lo–hi' (range, marked ~) or blank (unknown)."""
    if e is None or e.low is None or e.high is None:  # low and high are set together
        return ""
    if e.exact and e.value is not None:
        return fmt(e.value)
    low, high = fmt(e.low), fmt(e.high)
    unit = high.rsplit(" ", 1)[-1] if " " in high else ""
    if unit and low.endswith(" " + unit):
        low = low[: -len(unit) - 1]  # one unit for both ends: `~12.60–25.20 MB`
    return f"~{low}–{high}"


def fmt_ns(value: float | None) -> str:
    """A duration in µs, the one unit every text table uses for durations (JSON keeps ns)."""
    if value is None:
        return ""
    return f"{value / 1e3:,.1f}"


def _gbps(v: float) -> str:
    return f"{v:,.1f}"


def _ratio(v: float) -> str:
    return f"{v:.2f}x"


def _pct0(v: float) -> str:
    return f"{v:.1f}%"


def _header(d: PmcData, md: bool) -> list[str]:
    lines = [heading("hotspot pmc: L2 and L2→fabric counters", md), ""]
    for inp in d.inputs:
        zero = "  ALL COUNTERS ZERO" if inp.all_zero else ""
        lines.append(f"input: {inp.path} ({inp.layout}, {inp.dispatches} dispatches){zero}")
    lines.append(f"join: {d.join} ({d.join_reason})")
    arch = d.arch or f"undecided ({', '.join(d.arch_candidates) or 'no candidates'})"
    lines.append(f"arch: {arch} (from {d.arch_source})")
    if d.byte_formula:
        lines.append(f"bytes: {d.byte_formula}")
    peak = f"{d.peak_gbps:,.1f} GB/s" if d.peak_gbps is not None else "unknown"
    lines.append(f"peak: {peak} (from {d.peak_source})")
    if d.ideal_bytes_per_dispatch is not None:
        lines.append(f"ideal bytes per dispatch: {fmt_bytes(d.ideal_bytes_per_dispatch)}")
    return lines


def _kernel_rows(kernels: list[KernelReport]) -> list[list[str]]:
    rows = []
    for k in kernels:
        rows.append([
            k.kernel + (" (runtime)" if k.runtime else ""), str(k.dispatches), pct(k.l2_hit_pct),
            pct(k.req_32b_pct), fmt_range(k.fabric_read_bytes, fmt_bytes),
            fmt_ns(k.duration_ns), fmt_range(k.achieved_gbps, _gbps),
            fmt_range(k.pct_of_peak, _pct0), fmt_range(k.over_fetch, _ratio),
        ])
    return rows


KERNEL_HEADERS = ["kernel", "disp", "L2 hit", "32B req", "L2→fabric read", "time µs", "GB/s",
                  "% peak", "over-fetch"]


def _verdict_lines(kernels: list[KernelReport], md: bool) -> list[str]:
    lines: list[str] = []
    bullet = "- " if md else "  "
    for k in kernels:
        if not k.verdicts:
            continue
        lines.append(f"{'**' if md else ''}{k.kernel}{'**' if md else ''}")
        for v in k.verdicts:
            unsure = "" if v.certain else f" (undecided: collect {' or '.join(v.undecided_by)})" \
                if v.undecided_by else " (undecided)"
            lines.append(f"{bullet}[{v.id}] {v.text}{unsure}")
            lines.append(f"{'  ' if md else '    '}next: {v.next}")
        lines.append("")
    return lines


def _short_names(kernels: list[KernelReport]) -> dict[str, str]:
    """Each kernel's name as short as it can be while still telling the kernels apart."""
    names = list(dict.fromkeys(k.kernel for k in kernels))
    return dict(zip(names, distinct(names)))


def _range_notes(kernels: list[KernelReport]) -> list[str]:
    short = _short_names(kernels)
    notes = []
    for k in kernels:
        e = k.fabric_read_bytes
        if e.low is not None and not e.exact:
            notes.append(f"~ {short[k.kernel]}: {e.reason}")
        elif e.low is None and e.reason:
            notes.append(f"  {short[k.kernel]}: no bytes ({e.reason})")
    return notes


def _counter(k: KernelReport, name: str) -> str:
    """A counter's sum: blank when this kernel's file did not collect it."""
    return num(k.counters[name]) if name in k.counters else ""


def _counter_table(kernels: list[KernelReport], md: bool) -> str:
    names: list[str] = []
    for k in kernels:
        for n in k.counters:
            if n not in names:
                names.append(n)
    rows = [[k.kernel] + [_counter(k, n) for n in names] for k in kernels]
    wide = table(rows, ["kernel", *names], markdown=md, drop=False)
    if md or max(map(len, wide.split("\n"))) <= terminal_width():
        return wide
    # One column per counter does not fit the terminal (eight counters are ~115 columns): one row
    # per counter instead, a column per kernel, and per kernel when even that is too wide.
    short = _short_names(kernels)
    heads = fit_distinct([short[k.kernel] for k in kernels], COUNTER_HEADER)
    tall = table([[n, *(_counter(k, n) for k in kernels)] for n in names], ["counter", *heads],
                 drop=False)
    if max(map(len, tall.split("\n"))) <= terminal_width():
        return tall
    return "\n\n".join(f"{short[k.kernel]}\n"
                        + table([[n, _counter(k, n)] for n in names], ["counter", "sum"])
                        for k in kernels)


def _dispatch_table(dispatches: list[DispatchReport], md: bool) -> str:
    rows = [[str(x.dispatch_id), x.kernel, pct(x.l2_hit_pct),
             pct(x.req_32b_pct), fmt_range(x.fabric_read_bytes, fmt_bytes),
             fmt_ns(x.duration_ns), fmt_range(x.achieved_gbps, _gbps),
             fmt_range(x.pct_of_peak, _pct0), fmt_range(x.over_fetch, _ratio)]
            for x in dispatches]
    return table(rows, ["dispatch", *KERNEL_HEADERS[:1], *KERNEL_HEADERS[2:]], markdown=md)


def render(result: Result[PmcData], md: bool = False) -> str:
    d = result.data
    assert isinstance(d, PmcData)
    out = Sections()  # the sections of the pmc spec (`--section`, hotspot/render/sections.py)
    out.add("inputs", "\n".join(_header(d, md)).rstrip())
    kernels = [heading("Kernels (sums over dispatches; blank = not collected)", md), ""]
    kernels.append(table(_kernel_rows(d.kernels), KERNEL_HEADERS, markdown=md))
    notes = _range_notes(d.kernels)
    if notes:
        kernels += [""] + notes
    kernels += ["", "L2→fabric bytes are an upper bound on HBM reads (the Infinity Cache sits behind "
                "them). ~ marks a range: a needed counter was not collected."]
    out.add("kernels", "\n".join(kernels))
    verdicts = _verdict_lines(d.kernels, md)
    if verdicts:
        out.add("verdicts", "\n".join([heading("Verdicts", md), ""] + verdicts).rstrip())
    if any(k.counters for k in d.kernels):  # no empty table when no counter was read
        counters = [heading("Counters (sum over dispatches; blank = not collected, 0 = read zero)", md), ""]
        counters.append(_counter_table(d.kernels, md))
        runtime = [k.kernel for k in d.kernels if k.runtime]
        if runtime:
            counters += ["", f"(runtime) marks {len(runtime)} HIP runtime copy/fill kernel"
                         f"{'s' if len(runtime) != 1 else ''}: not your code, so no verdicts for "
                         f"{'them' if len(runtime) != 1 else 'it'}."]
        out.add("counters", "\n".join(counters))
    if d.dispatches is not None:
        out.add("dispatches", "\n".join([heading("Per dispatch", md), "", _dispatch_table(d.dispatches, md)]))
    return out.text().rstrip() + "\n"


def render_text(result: Result[PmcData]) -> str:
    return render(result, md=False)


def render_markdown(result: Result[PmcData]) -> str:
    return render(result, md=True)
