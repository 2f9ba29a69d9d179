"""The plan's rule definitions and what its engine works with (candidates, skipped rules, trust). The
items it writes (`data.plan`, docs/schema/plan.md) are records of hotspot/att/plan_items.py (the lower
layer, so a saved analysis reads them back into its `plan` slot); imported from here as before."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING, Callable, Union
from hotspot.att.plan_items import Estimate as Estimate
from hotspot.att.plan_items import Evidence as Evidence
from hotspot.att.plan_items import Kind as Kind
from hotspot.att.plan_items import Location
from hotspot.att.plan_items import PlanItem as PlanItem
from hotspot.att.plan_items import Site as Site
from hotspot.record import record
from hotspot.strenum import TextEnum

if TYPE_CHECKING:
    from hotspot.plan.context import PlanContext

PRIORITIES = ("HIGH", "MED", "LOW")


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
