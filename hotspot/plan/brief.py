"""The `brief` JSON detail level: the plan sized for an agent's context window (docs/schema/plan.md).

Built from the typed plan (PlanItem, Trust, StallSummary) in one place, so `plan --brief --format
json`, `analyze --plan --brief --format json` and the MCP server's default answer are the same view.
The whole envelope stays under BRIEF_BUDGET bytes on real captures: fixed counts of items, rows and
warnings, and long strings cut with an ellipsis (the full text is one command away: `more`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from hotspot.plan.conventions import VERDICT_CATEGORIES, VERDICT_ITEMS
from hotspot.plan.coverage import Coverage
from hotspot.plan.engine import CategoryShare
from hotspot.plan.model import Kind, PlanItem, Trust
from hotspot.record import record
from hotspot.result import Result

BRIEF_BUDGET = 4096          # bytes of the whole compact JSON envelope (the acceptance bound)
BRIEF_ROWS = 6               # code.json rows per item (wait rows first, then producers)
BRIEF_WARNINGS = 3
TEXT_CHARS = 240             # a fix, a reason or a warning longer than this is cut
TITLE_CHARS = 120
KERNEL_CHARS = 120


@record
class BriefItem:
    id: str
    priority: str
    title: str
    low_pct: float | None
    high_pct: float | None
    at: str | None           # "file:line" of the source line to edit (null without debug info)
    rows: list[int]          # code.json rows: the wait, then the loads it waits for (`#N` in analyze)
    isa: str | None
    fix: str
    rank: int | None = None  # the item's number in every view (PlanItem.rank)


@record
class BriefPlan:
    detail: str              # "brief"
    path: str
    kernel: str
    gfx: str | None
    trust: Trust
    stall_pct_of_cycles: float
    top_categories: list[CategoryShare]
    items: list[BriefItem]
    more_items: int
    more: str                # the one command that prints everything this view leaves out
    explained_share: float | None = None  # of all stall, at the rows the items name (coverage)
    unexplained: str | None = None        # the top class less than half explained: where it sits


def cut(text: str | None, limit: int) -> str:
    """`text` on at most `limit` characters; a cut one ends with an ellipsis."""
    text = text or ""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _at(file: str | None, line: int | None) -> str | None:
    if not file:
        return None
    return f"{file}:{line}" if line is not None else file


def _rows(item: PlanItem) -> list[int]:
    """The item's code.json rows, largest site first: wait rows, then their producers; the item's
    own row when it has no sites with rows."""
    rows: list[int] = []
    for site in item.sites:
        for r in ([site.wait_row] if site.wait_row is not None else []) + list(site.producer_rows):
            if r not in rows:
                rows.append(r)
    if not rows and item.location.line_number is not None:
        rows.append(item.location.line_number)
    return rows[:BRIEF_ROWS]


def brief_item(item: PlanItem) -> BriefItem:
    loc = item.location
    return BriefItem(item.id, item.priority, cut(item.title, TITLE_CHARS), item.estimate.low_pct,
                     item.estimate.high_pct, _at(loc.file, loc.line), _rows(item),
                     cut(loc.isa, TITLE_CHARS) if loc.isa else None, cut(item.fix, TEXT_CHARS), item.rank)


def more_command(command: str, path: str, extra: Sequence[str] = ()) -> str:
    """The full JSON of the same input: `hotspot plan PATH --format json` (analyze: `--plan`)."""
    args = ["hotspot", command, path, *extra]
    if command == "analyze":
        args.append("--plan")
    return " ".join(shlex.quote(a) for a in args) + " --format json"


def repeated_options(kernel: str | None = None, arch: str | None = None,
                     pmc: Sequence[str] | None = None, meta: Sequence[str] | None = None) -> list[str]:
    """The options a `more` command repeats so that it reads the same input the same way."""
    out: list[str] = []
    for flag, value in (("--kernel", kernel), ("--arch", arch)):
        if value:
            out += [flag, value]
    for flag, values in (("--pmc", pmc), ("--meta", meta)):
        for v in values or ():
            out += [flag, str(v)]
    return out


def brief_plan(command: str, path: str, kernel: str, gfx: str | None, trust: Trust,
               stall_pct_of_cycles: float, top_categories: list[CategoryShare], items: list[PlanItem],
               extra: Sequence[str] = (), coverage: Coverage | None = None) -> BriefPlan:
    trust = Trust(trust.level, [cut(r, TEXT_CHARS) for r in trust.reasons[:BRIEF_WARNINGS]]
                  + ([f"(+{len(trust.reasons) - BRIEF_WARNINGS} more)"]
                     if len(trust.reasons) > BRIEF_WARNINGS else []))
    # capture items are trust (their reasons are above), not gains: items[0] is the plan's item #1
    gains = [i for i in items if i.kind != Kind.CAPTURE]
    return BriefPlan("brief", path, cut(kernel, KERNEL_CHARS), gfx, trust, stall_pct_of_cycles,
                     list(top_categories[:VERDICT_CATEGORIES]),
                     [brief_item(i) for i in gains[:VERDICT_ITEMS]],
                     max(0, len(gains) - VERDICT_ITEMS), more_command(command, path, extra),
                     coverage.share if coverage is not None else None,
                     cut(coverage.gap.message, TEXT_CHARS) if coverage is not None and coverage.gap else None)


def brief_warnings(warnings: list[str]) -> list[str]:
    out = [cut(w, TEXT_CHARS) for w in warnings[:BRIEF_WARNINGS]]
    if len(warnings) > BRIEF_WARNINGS:
        out.append(f"(+{len(warnings) - BRIEF_WARNINGS} more warnings: see `more`)")
    return out


def brief_result(result: Result[object], extra: Sequence[str] = ()) -> Result[BriefPlan]:
    """The brief view of a `plan` or single-dispatch `analyze --plan` Result (same command name).
    `extra` are the options the `more` command repeats (--kernel, --pmc ...)."""
    from hotspot.errors import UsageError
    from hotspot.plan.api import PlanData, PlannedDispatch

    d = result.data
    if isinstance(d, PlanData):
        trust, summary, items, dispatch, arch = d.trust, d.summary, d.plan, d.dispatch, d.arch
        coverage = d.coverage
    elif isinstance(d, PlannedDispatch):
        p = d.plan
        trust, summary, items, dispatch, arch = p.trust, p.summary, p.items, d.analysis.dispatch, d.analysis.arch
        coverage = p.coverage
    else:
        raise UsageError("--brief JSON takes one dispatch", "drop --all, or drop --brief for the full JSON")
    view = brief_plan(result.command, str(dispatch.path), str(dispatch.kernel or dispatch.symbol or ""),
                      arch.gfx or None, trust, summary.stall_pct_of_cycles,
                      summary.top_categories, items, extra, coverage)
    return Result(result.command, view, brief_warnings(result.warnings))
