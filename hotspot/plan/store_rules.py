"""`store-gated-vmcnt`: a vmcnt wait for a load that also waits for older stores.

gfx9 has no separate store counter: buffer/global stores retire on vmcnt like loads (HARDWARE.md §3),
and s_waitcnt vmcnt(N) lets only the N newest operations stay in flight. A store issued before the
loads the consumer needs sits at the old end of the counter, so the wait for the load also waits for
the store's write acknowledgement. The fix is ordering: issue the loads first and the stores after
them (or after the wait), so the counted wait skips the stores.
"""

from __future__ import annotations

from collections import defaultdict

from hotspot.arch.classify import VMCNT_WAITS, VMEM_LOADS, VMEM_WRITES
from hotspot.att.waits.reduce import Producer, WaitBlame
from hotspot.plan.context import PlanContext
from hotspot.plan.conventions import PCT, ROUND_DIGITS
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.waits_rules import family_of, is_store


def _is_write(p: Producer) -> bool:
    return p.category in VMEM_WRITES and is_store(p.isa)


def _distance(p: Producer) -> float | None:
    d = p.median_distance_instructions
    return float(d) if d is not None else None


def _older_than_a_load(store: Producer, loads: list[Producer]) -> bool:
    """Issued before at least one of the loads (further from the wait); unknown distances count."""
    ds, dl = _distance(store), [d for d in map(_distance, loads) if d is not None]
    return ds is None or not dl or ds > min(dl)


# Issuing the loads before the stores moves them up by the stores' lead over them, no more: the
# wait then ends when the loads' own latency is covered. A lead under this share of the stall per
# wait gains nothing measurable: the load issued right after the store is exposed by its own short
# distance (short-load-distance claims it).
STORE_LEAD_MIN_SHARE = 0.25


def _cycles_before_wait(p: Producer) -> float | None:
    d = p.median_distance_cycles
    return float(d) if d is not None else None


def store_lead(stores: list[Producer], loads: list[Producer]) -> float | None:
    """Cycles the oldest store was issued before the newest awaited load (None: distances unknown)."""
    ds = [d for d in map(_cycles_before_wait, stores) if d is not None]
    dl = [d for d in map(_cycles_before_wait, loads) if d is not None]
    return max(ds) - min(dl) if ds and dl else None


def store_gated_vmcnt(ctx: PlanContext, rule: Rule) -> Outcome:
    fams: dict[str, list[tuple[WaitBlame, list[Producer], list[Producer]]]] = defaultdict(list)
    short_lead: list[str] = []
    for w in ctx.waits():
        if w.category not in VMCNT_WAITS or "vmcnt" not in w.isa:
            continue
        producers = w.producers
        stores = [p for p in producers if _is_write(p) and p.blamed_stall > 0]
        loads = [p for p in producers if p.category in VMEM_LOADS and not is_store(p.isa)]
        if not stores or not loads:
            continue  # a wait on stores alone is a memory-ordering fence (visibility), not gated
        stores = [p for p in stores if _older_than_a_load(p, loads)]
        if not stores:
            continue  # stores issued after every load: a drain question, not store gating
        lead, spw = store_lead(stores, loads), ctx.wait_stall_per_hit(w)
        if lead is not None and spw and lead < STORE_LEAD_MIN_SHARE * spw:
            short_lead.append(f"#{w.line_number}")
            continue  # the load is issued right after the stores: reordering them gains nothing
        fams[family_of(ctx, w, stores[0])].append((w, stores, loads))
    if not fams:
        if short_lead:
            return (f"the loads awaited at {', '.join(short_lead)} are issued right after the stores "
                    f"(a lead under {STORE_LEAD_MIN_SHARE:.0%} of the wait): reordering gains nothing, "
                    "the loads' own short distance is the cause")
        return "no vmcnt wait for a load also waits for stores"
    out = []
    for family, group in fams.items():
        sites = []
        for w, stores, loads in group:
            top = max(stores, key=lambda p: p.blamed_stall)
            loc = ctx.location_of(top)
            sites.append(Site(w.line_number, sorted(p.line_number for p in stores if p.line_number is not None),
                              loc.file, loc.line, int(sum(p.blamed_stall for p in stores))))
        sites.sort(key=lambda s: (-s.target_cycles, s.wait_row or -1))
        target = sum(s.target_cycles for s in sites)
        w0, stores0, loads0 = next(g for g in group if g[0].line_number == sites[0].wait_row)
        top = max(stores0, key=lambda p: p.blamed_stall)
        ev = [Evidence("store_blamed_stall_cycles", target),
              Evidence("store_blamed_stall_pct", round(PCT * target / ctx.total_stall, ROUND_DIGITS) if ctx.total_stall else 0.0),
              Evidence("waited_at", f"#{w0.line_number} {w0.isa}".strip()),
              Evidence("store_rows", ", ".join(f"#{p.line_number}" for p in stores0)),
              Evidence("load_rows", ", ".join(f"#{p.line_number}" for p in loads0)),
              Evidence("waits", len(sites))]
        lead, spw = store_lead(stores0, loads0), ctx.wait_stall_per_hit(w0)
        low, high = rule.removable
        bound = min(high, lead / spw) if lead is not None and spw else high
        if lead is not None:
            ev.append(Evidence("store_lead_cycles", round(lead), round(STORE_LEAD_MIN_SHARE * (spw or 0)), ">="))
        out.append(Candidate(
            ctx.location_of(top), ev, target,
            f"the s_waitcnt at #{w0.line_number} waits for load(s) {', '.join('#' + str(p.line_number) for p in loads0)}, "
            f"but store(s) {', '.join('#' + str(p.line_number) for p in stores0)} were issued before "
            "them and gfx9 counts stores in vmcnt: the wait also waits for the stores to be acknowledged",
            title="vmcnt wait gated by older stores",  # the engine adds "(N waits)"
            removable=(min(low, bound / 2), bound),
            basis=rule.basis + (f"; at most the stores' {lead:,.0f}-cycle lead over the loads, "
                                f"{min(1.0, bound):.0%} of the {spw:,.0f}-cycle wait" if lead is not None and spw else ""),
            sites=sites))
    return out
