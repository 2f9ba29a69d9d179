"""The plan's items as records: what `hotspot plan` and `analyze --plan` write (`data.plan`,
docs/schema/plan.md) and what a saved `analyze --plan` document reads back into the analysis's
`plan` slot (hotspot/att/model.py `DispatchAnalysis.plan`). Records two layers share live in the
lower one (docs/architecture.md): here, only records, so the analysis holds the items the plan
produces without importing plan/. The rules (hotspot/plan/) build them; hotspot/plan/model.py
re-exports them."""

from __future__ import annotations

from dataclasses import field
from enum import Enum

from hotspot.record import record


@record
class Location:
    """Where to edit: source file:line and the instruction (code.json row). Kernel-wide items carry
    only the kernel name (file/line/line_number null)."""

    file: str | None
    line: int | None
    line_number: int | None
    isa: str | None
    kernel: str


@record
class Site:
    """One place an item's pattern occurs: the s_waitcnt row (when the pattern is a wait), the code
    rows of its producers, and the source line to edit (structured refs, not formatted text)."""

    wait_row: int | None
    producer_rows: list[int]
    file: str | None
    line: int | None
    target_cycles: int


@record
class Evidence:
    metric: str
    value: bool | float | int | str | None  # bool: a yes/no fact (dram_share_known)
    threshold: float | int | str | None = None
    comparison: str | None = None  # how value relates to threshold for the rule to fire: ">=", "<", ...


@record
class Estimate:
    """Share of the traced waves' cycles (Σ latency) the fix may save, as a range, in percent."""

    low_pct: float | None     # null when the capture cannot support an estimate (see `withheld`)
    high_pct: float | None
    basis: str
    target_cycles: int        # cycles the item targets (stall, or MFMA pipe time for shape rules)
    target_stall_pct: float   # target_cycles as a percent of total stall (the Amdahl guard input)
    withheld: str | None = None  # why low/high are null (an unrepresentative capture)


class Kind(str, Enum):
    """What an item asks to change (a rule's kind, written as its value)."""

    CODE = "code"        # edit the kernel
    LAUNCH = "launch"    # change the grid (ranked by its bound like any item)
    CAPTURE = "capture"  # trust: re-capture first; listed first, never ranked among the others
    MEMORY = "memory"    # bandwidth roof or counter verdict


@record
class PlanItem:
    id: str
    priority: str
    title: str
    kind: Kind
    location: Location
    evidence: list[Evidence]
    root_cause: str
    fix: str
    estimate: Estimate
    sites: list[Site] = field(default_factory=list)  # every site of the root cause, largest first
    # The item's number, the same in every format (text, markdown, JSON, HTML, the verdict): 1..N over
    # the items that are not capture items, in plan order; null for capture items (they are trust,
    # listed first, and take no number: "item #1" is the first change to make).
    rank: int | None = None
