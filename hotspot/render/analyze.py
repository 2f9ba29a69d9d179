"""Text and markdown views of an `analyze` Result (no computation beyond formatting)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from hotspot.att.model import AnalysisMode, DetailLine, DispatchAnalysis
from hotspot.att.launch_match import MATCHED, LaunchOut
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.capture import DispatchCandidate
from hotspot.arch.occupancy_model import per_simd
from hotspot.kernel_names import short_kernel_name
from hotspot.render.tables import (
    BAR_HEADER,
    bar,
    heading,
    num,
    pct,
    shorten,
    shorten_left,
    shorten_middle,
    table,
)
from hotspot.render.sections import Sections, wanted
from hotspot.result import Result

if TYPE_CHECKING:  # the plan's modules load only when a plan was made (`--plan`)
    from hotspot.plan.api import DispatchPlan, PlannedDispatch

ISA_WIDTH = 56
SOURCE_WIDTH = 60
KERNEL_WIDTH = 160  # the full kernel name in the summary is cut to this without the tables (--detail)


@runtime_checkable
class ManyDispatches(Protocol):
    """`analyze --all` data, with or without the plan (MultiAnalysis; hotspot/plan/api.py
    PlannedMulti, whose module a plain analyze never loads): the ranking, then each dispatch."""

    ranking: list[DispatchCandidate]
    dispatches: list[Any]  # DispatchAnalysis, or PlannedDispatch with the plan


def render_text(result: Result[object]) -> str:
    return _render(result, markdown=False)


def render_markdown(result: Result[object]) -> str:
    return _render(result, markdown=True)


def _render(result: Result[object], markdown: bool) -> str:
    data = result.data
    if isinstance(data, ManyDispatches):
        parts = [_ranking(data.ranking, markdown)] if wanted("ranking") else []
        parts += [_one(a, markdown) for a in data.dispatches]
        return "\n\n".join(p for p in parts if p)
    return _one(cast("DispatchAnalysis | PlannedDispatch", data), markdown)  # one dispatch


def _ranking(ranking: list[DispatchCandidate], markdown: bool) -> str:
    rows = [[i + 1, r.path, r.kernel, r.waves, r.executed_instructions,
             pct(r.source_mapped_pct, 0), r.status] for i, r in enumerate(ranking)]
    return heading("Dispatch dirs", markdown) + "\n" + table(
        rows, ["#", "dir", "kernel", "waves", "executed", "mapped", "status"], markdown)


def _one(one: DispatchAnalysis | PlannedDispatch, markdown: bool) -> str:
    """The verdict first (when the plan was made), then the summary and the tables; the plan
    section where asked (`--plan`, `--section plan`). The command says which sections print
    (hotspot/render/sections.py); called without that choice, a view with the plan attached shows
    the verdict, the summary and the plan (the tables with --detail), one without it the tables."""
    a, plan = (one, None) if isinstance(one, DispatchAnalysis) else (one.analysis, one.plan)
    out = Sections()
    planned = plan is not None
    detail, mode = a.asked_detail, a.asked_tables
    tables = not planned or detail  # the default when the command did not choose
    plan_shown = planned and wanted("plan", planned)
    d, t = a.dispatch, a.totals
    sampling = a.mode == AnalysisMode.PC_SAMPLING
    unit = "samples" if sampling else "cycles"
    kernel = short_kernel_name(d.kernel) if not markdown else shorten(d.kernel, 100)
    if plan is not None:
        # one header: the verdict's first line (kernel on arch); markdown makes it the title
        from hotspot.render.plan import verdict_section

        out.add("verdict", verdict_section(short_kernel_name(d.kernel), a.arch, plan.verdict, markdown,
                                           title="hotspot analyze", plan_below=plan_shown))
    else:
        out.add("verdict", f"# hotspot analyze: {kernel}" if markdown else f"hotspot analyze: {kernel}")
    summary = [
        ["dispatch dir", d.path],
        *([["kernel", d.kernel if wanted("instructions", tables) else shorten_middle(d.kernel, KERNEL_WIDTH)]]
          if not markdown and short_kernel_name(d.kernel) != d.kernel else []),
        ["kernel symbol", shorten(d.symbol, 100) if d.symbol else "(none)"],
        ["arch", f"{a.arch.gfx}" + (f" ({a.arch.product})" if a.arch.product else "")
         + f"  [from {a.arch.source}]"],
        ["waves traced", num(d.waves) + _working(a)],
        ["instructions", f"{num(d.executed_instructions)} executed of {num(d.code_rows)} rows; "
                         f"{pct(d.source_mapped_pct, 0)} source-mapped"],
    ]
    if sampling:
        s = a.samples
        assert s is not None  # a PC-sampling analysis always has its counts
        summary.append(["samples", f"{num(s.total)} ({num(s.issued)} issued, "
                                   f"{num(s.stalled)} stalled)"])
    else:
        stall_pct = 100.0 * t.stall / t.latency if t.latency else 0.0
        summary += [
            ["latency (Σ cycles)", num(t.latency)],
            ["stall", f"{num(t.stall)} ({pct(stall_pct)} of latency)"],
            ["issue / idle", f"{num(t.issue)} / {num(t.idle)}"],
        ]
    if a.selection:
        summary.append(["chosen because", a.selection.reason])
    out.add("summary", table(summary, ["", ""], markdown) if markdown else
            "\n".join(f"  {k:<20} {v}" for k, v in summary))

    if sampling and a.samples is not None and a.samples.stall_reasons:
        reasons = sorted(a.samples.stall_reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        stalled = a.samples.stalled or 1
        out.add("stall", heading("Why stalled samples were not issued", markdown) + "\n" + table(
            [[name, num(n), pct(100 * n / stalled), bar(n / stalled)] for name, n in reasons if n],
            ["reason", "samples", "share", BAR_HEADER], markdown), tables)

    occ = getattr(a, "occupancy", None)
    if occ:
        out.add("occupancy", _occupancy(occ, markdown), tables)

    cats = [[c.category, num(c.stall), pct(100 * c.share), bar(c.share), num(c.hit)]
            for c in a.stall_by_category if c.stall or c.latency]
    out.add("stall", heading(f"Stall by category ({unit})", markdown) + "\n"
            + table(cats, ["category", "stall", "share", BAR_HEADER, "hits"], markdown), tables)

    if mode in ("src", "both"):
        if a.source_lines:
            rows = [[shorten_left(_loc(s.file, s.line), SOURCE_WIDTH), num(s.stall), pct(100 * s.share),
                     pct(100 * s.stall_rate, 0), s.dominant_category, len(s.instructions)]
                    for s in a.source_lines]
            out.add("lines", heading(f"Top source lines ({len(rows)})", markdown) + "\n" + table(
                rows, ["source line", "stall", "share", "stall rate", "dominant", "instrs"], markdown), tables)
        else:
            out.add("lines", heading("Top source lines", markdown) + "\n(no source locations in this trace)",
                    tables)
    if mode in ("asm", "both"):
        rows = [[i.line_number, i.isa, i.category, num(i.hit), num(i.stall),
                 pct(100 * i.share), i.source.rsplit("/", 1)[-1]]
                for i in a.instructions]
        out.add("instructions", heading(f"Top instructions ({len(rows)})", markdown) + "\n" + table(
            rows, ["#", "instruction", "category", "hits", "stall", "share", "source"], markdown), tables)

    if not sampling:
        from hotspot.render.analyze_waves import wave_sections

        for name, text in wave_sections(a, markdown):
            out.add(name, text, tables)

    if a.detail:
        out.add("hot-lines", _detail(a.detail, markdown), tables)

    rep = getattr(a, "representativeness", None)
    if rep is not None and rep.reasons:
        lines = [heading(f"Does the capture represent the kernel? {rep.level}", markdown)]
        found = {f.id: f.message for f in a.findings}
        for r in rep.reasons:
            lines.append(f"- [{r.level}] {r.id}: {_once(r.message, found.get(r.id))}")
            if r.recapture and r.level != "note":
                lines.append(f"    next: {r.recapture}")
        out.add("representativeness", "\n".join(lines), tables)

    if a.findings:
        lines = [heading("Findings", markdown)]
        for f in a.findings:
            lines.append(f"- [{f.severity}] {f.id}: {f.message}")
            if f.hint:
                lines.append(f"    next: {f.hint}")
        out.add("findings", "\n".join(lines), tables)
    if plan_shown:
        out.add("plan", "\n\n".join(_plan(a, plan, markdown)), planned)
    return out.text()


def _once(reason: str, finding: str | None) -> str:
    """A trust reason that quotes a finding (source-collapse: "...unreliable (...): <finding>")
    without the quote: the Findings section below prints the finding itself."""
    if finding and reason.endswith(": " + finding):
        return reason[:-len(finding)] + "see the finding below"
    return reason


def _plan(a: DispatchAnalysis, plan: DispatchPlan | None, markdown: bool) -> list[str]:
    """The optimization plan section (only with `analyze --plan`; rendering lives in render/plan.py)."""
    if plan is None:
        return []
    from hotspot.render.plan import gap_block, items_block

    gap = gap_block(plan.coverage, markdown)
    return [items_block(plan.items, plan.skipped, markdown, plan.trust, detail=a.asked_detail)] + ([gap] if gap else [])


def _working(a: DispatchAnalysis) -> str:
    """` (N early-exit; shares over the M working waves)` when the shares leave waves out."""
    rep = getattr(a, "representativeness", None)
    if rep is None or rep.shares_over != "working-waves":
        return ""
    return f" ({num(rep.waves_early_exit)} early-exit; shares over the {num(rep.waves_working)} working waves)"


def _launch(launch: LaunchOut) -> str:
    if launch.status != MATCHED or launch.grid is None or launch.workgroup is None:
        return f"  launch:      {launch.status}: {launch.reason}"
    grid = "x".join(map(str, launch.grid))
    wg = "x".join(map(str, launch.workgroup))
    took = (f", {launch.duration_ns / 1000:,.1f} us ({launch.duration_source})"
            if launch.duration_ns is not None else "")
    return (f"  launch:      grid {grid}, workgroup {wg} = {num(launch.workgroups or 0)} workgroups"
            f"{took} [{launch.match}, {launch.row_count} row(s)]")


def _loc(file: str, line: int | None) -> str:
    return f"{file}:{line if line is not None else '?'}"


def _occupancy(occ: DispatchOccupancy, markdown: bool) -> str:
    lines = [heading("Occupancy", markdown)]
    r = occ.resources
    src = r.source if r is not None else {}
    parts = []
    for key, field_ in (("vgpr", "vgpr"), ("agpr", "agpr"), ("sgpr", "sgpr"), ("lds", "lds_bytes"),
                        ("wg", "wg_threads")):
        value = getattr(r, key) if r is not None else None
        parts.append(f"{key} {'?' if value is None else num(value)}"
                     + (f" [{src[field_].split(' (')[0]}]" if field_ in src else ""))
    lines.append("  resources:   " + ", ".join(parts))
    if not occ.available:
        lines.append(f"  theoretical: not available ({occ.reason})")
    elif occ.waves_per_simd is None and occ.candidates:
        lines.append(f"  theoretical: arch undecided; {occ.candidates.summary}")
    else:
        bound = (f" (at most: {' and '.join(occ.unknown_limits)} limit unknown)"
                 if occ.unknown_limits else "")
        lines.append(f"  theoretical: {per_simd(occ.waves_per_simd)} on {occ.arch}, limited by "
                     f"{', '.join(occ.limiters) or occ.limiter}{bound}")
    a = occ.achieved
    if a is not None and a.mean_waves_per_simd is not None:
        lines.append(f"  achieved:    mean {a.mean_waves_per_simd:.2f}, peak "
                     f"{per_simd(a.peak_waves_per_simd)} over {a.simds} SIMDs (occupancy.json)")
    if occ.launch is not None:
        lines.append(_launch(occ.launch))
    for name, step in (occ.next_step or {}).items():
        lines.append(f"  next step ({name}): {step.message}")
    for note in occ.notes or ():
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _detail(detail: list[DetailLine], markdown: bool) -> str:
    parts = [heading("Hot lines in detail", markdown)]
    for dl in detail:
        where = ("  (from snapshot)" if dl.source_found == "snapshot" else
                 f"  (from {dl.source_path}, --source-map)" if dl.source_found == "source-map" else "")
        parts.append(f"{_loc(dl.file, dl.line)}{where}")
        if dl.source_available:
            for s in dl.snippet:
                mark = ">>" if s.hot else "  "
                parts.append(f"  {mark} {s.line:>5} | {s.text}")
        else:
            parts.append("  (source not available: no snapshot; pass --source-map OLD=NEW to read it "
                         "from a local checkout)")
        for i in dl.instructions:
            parts.append(f"     #{i.line_number:<6} {shorten(i.isa, ISA_WIDTH):<{ISA_WIDTH}} "
                         f"{i.category:<12} stall {num(i.stall)}")
    return "\n".join(parts)
