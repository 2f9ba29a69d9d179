"""Plan items and rule definitions. Items serialize as the `data.plan` JSON (docs/schema/plan.md)."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING, Callable, Union
from hotspot.plan.location import Location
from hotspot.record import record
from hotspot.strenum import TextEnum

if TYPE_CHECKING:
    from hotspot.plan.context import PlanContext

PRIORITIES = ("HIGH", "MED", "LOW")


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


class Gain(str, Enum):
    """What a rule's fix changes, which decides the roofs that cap its estimate (engine._cap_at_roofs)."""

    HIDES_LATENCY = "hides-latency"      # capped by the bandwidth and the matrix-core roof
    REMOVES_BYTES = "removes-bytes"      # not capped by the bandwidth roof
    REMOVES_COMPUTE = "removes-compute"  # not capped by the matrix-core roof


GAINS = tuple(g.value for g in Gain)
HIDES_LATENCY, REMOVES_BYTES, REMOVES_COMPUTE = Gain

TRUST_LEVELS = ("ok", "limited", "unrepresentative")
OK, LIMITED, UNREPRESENTATIVE = TRUST_LEVELS


@record
class Trust:
    """How far the capture supports the plan: `ok`, `limited` (priorities capped at MED; reasons say
    what is missing) or `unrepresentative` (no estimates; re-capture first)."""

    level: str
    reasons: list[str]


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


class SkipStatus(TextEnum):
    """Why a rule gave no item: an input it reads is missing, it did not fire, its group is below
    the guard, or its item was capped off the list."""

    MISSING_INPUT = "missing-input"
    NOT_TRIGGERED = "not-triggered"
    BELOW_GUARD = "below-guard"
    CAPPED = "capped"


@record
class Skipped:
    id: str
    status: SkipStatus
    reason: str
    target_stall_pct: float | None = None  # share of stall of a below-guard or capped group
    estimate_high_pct: float | None = None  # a capped item's estimate: its range never ranks above
    estimate_low_pct: float | None = None   # a shown one's (the order is by the middle of the range)


@record
class Candidate:
    """What a rule found at one location, before the engine applies estimate, guard and priority."""

    location: Location
    evidence: list[Evidence]
    target_cycles: int
    root_cause: str
    title: str | None = None          # overrides the rule title (e.g. names the instruction)
    fix_extra: str = ""               # appended to the rule's fix text
    fix: str | None = None            # replaces the rule's fix text (the cause checked is another one)
    removable: tuple[float, float] | None = None  # overrides the rule's removable fraction
    basis: str | None = None          # overrides the rule's basis text
    # Candidates of one rule with the same family are one root cause (e.g. every LDS-read wait of
    # one loop body): the engine merges them into one item whose sites list each of them.
    family: str | None = None
    sites: list[Site] = field(default_factory=list)
    severity: str | None = None  # capture items: the severity of the finding behind them
    # The removable range is a share of the kernel's time (a launch or roofline bound), not of the
    # target's cycles: the estimate is the range itself.
    kernel_time: bool = False
    # Dropped when this rule's item claims a gain in the same plan (it states the same cause better:
    # a load that cannot move near the bandwidth roof is the roof, `bandwidth-bound`).
    absorbed_by: str | None = None


Outcome = Union[list[Candidate], str]  # candidates, or the reason the rule did not fire


@record
class Rule:
    """One rule as data: what it reads, its thresholds, its fix, and how much of its target the fix
    can remove (`removable`, fractions of target_cycles) with the reason (`basis`)."""

    id: str
    title: str
    kind: Kind
    reads: tuple[str, ...]            # data fields it needs ("occupancy", "waits", ...); all required
    optional_reads: tuple[str, ...]   # fields it uses when present
    thresholds: dict[str, float]
    fix: str
    removable: tuple[float, float]
    basis: str
    evaluate: Callable[["PlanContext", "Rule"], Outcome] = field(repr=False, compare=False)
    # What the fix changes, which says which roof bounds its gain: a fix that hides latency or
    # removes stall (the default, so a new rule cannot escape the caps) can only win the headroom
    # below the bandwidth roof and the matrix-core roof; one that removes bytes is not capped by the
    # bandwidth roof, one that removes matrix-core work not by the compute roof.
    gain: Gain = Gain.HIDES_LATENCY
