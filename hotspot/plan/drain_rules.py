"""`conservative-drain`: an s_waitcnt that waits for loads its consumers do not read yet.

Counters retire in order within one type (HARDWARE.md §3): `vmcnt(N)`/`lgkmcnt(N)` lets the N
newest operations stay in flight. When the instructions between a wait and the next wait read only
the registers of the older producers, the newest ones could stay outstanding: a counted wait starts
the consumer as soon as its own data is there. Pairs are routed here by waits_rules.pairs_of
(register_reads.py decides which producers were not needed).
"""

from __future__ import annotations

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.plan.register_reads import drained_producers
from hotspot.plan.waits_rules import _producer_items, pairs_of


def conservative_drain(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no s_waitcnt waits for newer loads its consumers do not read before the next wait"
    out = []
    for c in _producer_items(
            ctx, pairs,
            "the s_waitcnt also waits for newer loads whose registers the following instructions do not "
            "read before the next wait: the consumer of the older loads starts late"):
        site = c.sites[0]
        wait = next(p.wait for p in pairs if p.wait.line_number == site.wait_row)
        drained = drained_producers(ctx, wait)
        counted = f"{wait.isa} -> counted wait leaving {len(drained)} newest load(s) in flight"
        out.append(Candidate(c.location, c.evidence + [Evidence("unneeded_newest_loads", len(drained)),
                                                       Evidence("counted_wait", counted)],
                             c.target_cycles, c.root_cause,
                             title="wait drains loads its consumers do not need yet",
                             family=c.family, sites=c.sites))
    return out
