"""Rules over `data.waits` (each s_waitcnt with the loads it waits for): where a load's latency is
not hidden, and why.

Every (wait, producer) pair with little cover is assigned to exactly one rule, in this order:
cross-lane producers -> `lgkm-cross-lane` (breakdown_rules.py); VMEM loads inside a loop that holds
MFMAs -> `load-in-mfma-loop`; LDS reads whose wait is followed at once by an MFMA ->
`lds-read-before-mfma`; (before those: producers the wait need not wait for ->
`conservative-drain`, drain_rules.py); a wait on several VMEM loads issued back to back -> `back-to-back-loads`;
`s_load`s outside loops (kernel arguments) -> `kernarg-loads` (kernarg_rules.py); any other load ->
`short-load-distance`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from hotspot.arch.classify import Category, is_wait, mnemonic_of
from hotspot.arch.classify import LOADS as ANY_LOAD
from hotspot.arch.classify import VMEM_LOADS
from hotspot.att.code_totals import InstructionStat
from hotspot.att.waits.reduce import Producer, WaitBlame
from hotspot.plan.context import Pair, PlanContext, is_kernarg_load
from hotspot.plan.conventions import PCT, ROUND_DIGITS
from hotspot.plan.load_mobility import load_mobility
from hotspot.plan.register_budget import register_cost
from hotspot.plan.register_reads import dest_regs
from hotspot.plan.register_reads import drained_producers
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.pingpong_rules import memory_phase_rows
from hotspot.plan.spill_rules import spill_pairs
from hotspot.plan.spin_rules import spin_rows

# A load whose wait still stalls after less than half of its latency was covered by other work
# (cover = issue-to-wait distance / (distance + stall per wait)) is "waited on too early": half is
# the point where moving it earlier would gain more than the work already overlapping it.
LITTLE_COVER_RATIO = 0.5
# "Right before the MFMA": the MFMA issues within this many instructions after the lgkmcnt wait
# (the wait itself, then at most one address/move instruction).
LDS_MFMA_WINDOW_INSTRUCTIONS = 2
# Back-to-back: each load's distance to the wait (in instructions) is at most the number of loads
# in the group plus this slack (a couple of address updates), i.e. no real compute in between.
BACK_TO_BACK_SLACK_INSTRUCTIONS = 2
BACK_TO_BACK_MIN_LOADS = 2

ENTRY_LOAD_NOTE = (
    " This load is issued before the kernel's first wait, so it cannot move earlier: preload kernel "
    "arguments into SGPRs (gfx940+: LLVM -amdgpu-kernarg-preload-count=N) or start work that does "
    "not need it before the s_waitcnt.")
ENTRY_VMEM_NOTE = (
    " This load is issued before the kernel's first wait, so it cannot move earlier: start work "
    "that does not need it before the s_waitcnt, or give each wave more independent loads.")

KERNARG_FAMILY = "kernel-argument scalar loads"


def _cover(distance: float | None, stall_per_wait: float) -> float | None:
    if distance is None:
        return None
    total = distance + stall_per_wait
    return distance / total if total > 0 else None


def _is_single_dword(isa: str) -> bool:
    mn = mnemonic_of(isa)
    return mn.endswith(("_dword", "_b32", "_ubyte", "_ushort", "_sbyte", "_sshort", "_u8", "_u16",
                        "_i8", "_i16"))


def is_store(isa: str) -> bool:
    """LDS/VMEM writes also retire on the counters, but they are not loads to move earlier."""
    mn = mnemonic_of(isa)
    return "store" in mn or "write" in mn or "atomic" in mn


def assign_pairs(ctx: PlanContext) -> dict[str, list[Pair]]:
    """Pairs with little cover, by the rule that owns them (see module docstring)."""
    if ctx.wait_pairs is not None:
        return ctx.wait_pairs
    out: dict[str, list[Pair]] = defaultdict(list)
    poll = spin_rows(ctx)
    spilled = spill_pairs(ctx)  # loads drained by a reload's wait or stored to scratch: register-spill's
    hidden = memory_phase_rows(ctx)  # a ping-pong memory phase: the other half's MFMAs cover it
    for wait in ctx.waits():
        spw = ctx.wait_stall_per_hit(wait)
        if not spw or wait.line_number in poll:
            continue  # a flag poll's wait is spin-wait-barrier's
        if wait.line_number in hidden:
            continue  # pingpong-barrier's: what the other half does not cover is its lost barrier wait
        producers = wait.producers
        vmem = [p for p in producers if p.category in VMEM_LOADS]
        back_to_back = len(vmem) >= BACK_TO_BACK_MIN_LOADS and all(
            p.median_distance_instructions is not None
            and p.median_distance_instructions <= len(vmem) + BACK_TO_BACK_SLACK_INSTRUCTIONS
            for p in vmem)
        drained = drained_producers(ctx, wait)
        follows_mfma = any(i.category == Category.MFMA
                           for i in ctx.following(wait.line_number, LDS_MFMA_WINDOW_INSTRUCTIONS))
        for p in producers:
            cat = p.category
            pair = Pair(wait, p, spw, _cover(p.median_distance_cycles, spw))
            if cat == Category.CROSS_LANE:
                out["lgkm-cross-lane"].append(pair)
                continue
            if cat not in ANY_LOAD or is_store(p.isa) or pair.cover is None or pair.cover >= LITTLE_COVER_RATIO:
                continue
            if (wait.line_number, row_of(p)) in spilled:
                continue
            if row_of(p) in drained:
                out["conservative-drain"].append(pair)  # the wait need not wait for it at all
            elif cat in VMEM_LOADS and ctx.has("loops") and ctx.mfma_loop_containing(
                    wait.line_number, row_of(p)):
                out["load-in-mfma-loop"].append(pair)
            elif cat == Category.LDS and follows_mfma:
                out["lds-read-before-mfma"].append(pair)
            elif cat in VMEM_LOADS and back_to_back:
                out["back-to-back-loads"].append(pair)
            elif is_kernarg_load(ctx, wait, p):
                out["kernarg-loads"].append(pair)
            else:
                out["short-load-distance"].append(pair)
    ctx.wait_pairs = out
    return out


def row_of(p: Producer) -> int:
    """The producer's code row (-1 for the "no producer" bucket, which no rule takes)."""
    return p.line_number if p.line_number is not None else -1


def pairs_of(ctx: PlanContext, rule: Rule) -> list[Pair]:
    """The pairs `rule` owns (none when nothing was routed to it)."""
    return assign_pairs(ctx).get(rule.id, [])


def _by_producer(pairs: list[Pair]) -> list[list[Pair]]:
    groups: dict[int, list[Pair]] = defaultdict(list)
    for pr in pairs:
        groups[row_of(pr.producer)].append(pr)
    return sorted(groups.values(), key=lambda g: (-_blamed(g), row_of(g[0].producer)))


def _blamed(pairs: list[Pair]) -> float:
    return sum(p.producer.blamed_stall for p in pairs)


def _median_cover(pairs: list[Pair]) -> float:
    covers = sorted(p.cover for p in pairs if p.cover is not None)
    return covers[len(covers) // 2] if covers else 0.0


def _worst_wait(pairs: list[Pair]) -> WaitBlame:
    return max(pairs, key=lambda p: p.producer.blamed_stall).wait


def _common_evidence(ctx: PlanContext, group: list[Pair]) -> list[Evidence]:
    prod = group[0].producer
    wait = _worst_wait(group)
    blamed = _blamed(group)
    return [
        Evidence("blamed_stall_cycles", int(blamed)),
        Evidence("blamed_stall_pct", round(PCT * blamed / ctx.total_stall, ROUND_DIGITS) if ctx.total_stall else 0.0),
        Evidence("waited_at", f"#{wait.line_number} {wait.isa}".strip()),
        Evidence("median_distance_cycles", prod.median_distance_cycles),
        Evidence("median_distance_instructions", prod.median_distance_instructions),
        Evidence("cover_ratio", round(_median_cover(group), 3), LITTLE_COVER_RATIO, "<"),
    ]


def family_of(ctx: PlanContext, wait: WaitBlame, producer: Producer) -> str:
    """The root cause a (wait, producer) pair belongs to: the loop body holding the wait (one fix
    covers every site of the pattern there), kernel-argument loads at entry (one batched load fixes
    them all), the waits of one source line outside loops (unrolled copies of one statement: one
    edit fixes them all), else the wait itself. Keyed on the wait, so a wait is in one family."""
    n = wait.line_number
    loop = next(((lo, hi) for lo, hi in sorted(ctx.loop_ranges, key=lambda r: r[1] - r[0])
                 if lo <= n <= hi), None)
    if loop is not None:
        return f"loop #{loop[0]}-#{loop[1]}"
    if producer.category == Category.SMEM:
        return KERNARG_FAMILY  # outside loops: one batched s_load serves them all
    if wait.source.file and wait.source.line:
        return f"unrolled copies of {wait.source.file}:{wait.source.line}"
    return f"wait #{n}"


def sites_of(ctx: PlanContext, pairs: list[Pair]) -> list[Site]:
    """One site per wait: its producers and the source line of the largest one."""
    by_wait: dict[int, list[Pair]] = defaultdict(list)
    for pr in pairs:
        by_wait[pr.wait.line_number].append(pr)
    out = []
    for wline, group in by_wait.items():
        top = max(group, key=lambda p: p.producer.blamed_stall).producer
        loc = ctx.location_of(top)
        out.append(Site(wline, sorted({row_of(p.producer) for p in group}),
                        loc.file, loc.line, int(_blamed(group))))
    return sorted(out, key=lambda s: (-s.target_cycles, s.wait_row or -1))


def _producer_items(ctx: PlanContext, pairs: list[Pair], root: str,
                    title_of: Callable[[Producer], str] | None = None) -> list[Candidate]:
    fams: dict[str, list[Pair]] = defaultdict(list)
    for pr in pairs:
        fams[family_of(ctx, pr.wait, pr.producer)].append(pr)
    out = []
    for family, fam_pairs in fams.items():
        for group in _by_producer(fam_pairs):
            prod = group[0].producer
            out.append(Candidate(ctx.location_of(prod), _common_evidence(ctx, group),
                                 int(_blamed(group)), root,
                                 title=title_of(prod) if title_of else None,
                                 family=family, sites=sites_of(ctx, group)))
    return out


def load_in_mfma_loop(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no VMEM load inside an MFMA loop is waited on with little cover"
    items = _producer_items(
        ctx, pairs,
        "the load is issued in the same loop iteration that consumes it, so the s_waitcnt inside "
        "the MFMA loop waits for most of the memory latency instead of overlapping it with the MFMAs")
    for c in items:
        lo_hi = ctx.mfma_loop_containing(c.location.line_number or -1)
        if lo_hi:
            c.evidence.append(Evidence("loop_rows", f"#{lo_hi[0]}-#{lo_hi[1]}"))
    return items


def lds_read_before_mfma(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no lgkmcnt wait on LDS reads directly precedes an MFMA with little cover"
    items = _producer_items(
        ctx, pairs,
        "the LDS read is waited on (s_waitcnt lgkmcnt) right before the MFMA that consumes it, so the "
        "matrix core idles for the LDS latency")
    out = []
    for c in items:
        # ping-pong fragments need one more copy of the MFMA operands one wait's reads fill
        wait_row = c.sites[0].wait_row if c.sites else None
        needed = fragment_vgprs(ctx, wait_row, [p.producer for p in pairs if p.wait.line_number == wait_row])
        cost = register_cost(ctx, needed)
        if cost is None:
            out.append(c)
            continue
        low, high = c.removable or rule.removable
        kept = cost.kept_share
        priced = (f"the grid takes {cost.rounds} round(s) at {cost.waves} and {cost.rounds_after} at "
                  f"{cost.waves_after} waves/SIMD: the gain keeps {kept:.0%} of it"
                  if cost.rounds is not None and cost.rounds_after else f"the gain keeps {kept:.0%} of it")
        out.append(replace(
            c, removable=(low * kept, high * kept),
            evidence=c.evidence + [Evidence("fragment_vgprs_needed", cost.needed, cost.headroom, ">"),
                                   Evidence("vgprs_in_use_isa", cost.in_use, cost.allowed, "<="),
                                   Evidence("waves_per_simd_after", cost.waves_after)]
            + ([Evidence("grid_rounds", cost.rounds), Evidence("grid_rounds_after", cost.rounds_after)]
               if cost.rounds is not None else []),
            basis=(c.basis or rule.basis) + f"; the second fragment set needs {cost.needed} VGPRs; the ISA "
                  f"uses {cost.in_use} of the {cost.allowed} a wave may hold at {cost.waves} waves/SIMD "
                  f"({cost.headroom} free), so it costs occupancy ({cost.waves} -> {cost.waves_after}): "
                  + priced,
            fix_extra=f" Free {cost.needed - cost.headroom} VGPRs first (the ISA uses {cost.in_use} of the "
                      f"{cost.allowed} allowed at {cost.waves} waves/SIMD), or the extra fragments cost "
                      "a wave per SIMD."))
    return [c for c in out if (c.removable or rule.removable)[1] > 0] or \
        "LDS-read ping-pong needs registers the kernel does not have at any occupancy"


def _width(reg: tuple[str, int, int]) -> int:
    return reg[2] - reg[1] + 1 if reg[0] == "v" else 0


def fragment_vgprs(ctx: PlanContext, wait_row: int | None, reads: list[Producer]) -> int:
    """VGPRs a second copy of one wait's fragments needs: the MFMA source operands (A and B) after
    the wait that the LDS reads fill, whole (`v[70:77]` is 8 registers even when one read fills 4
    of them); without such an MFMA, the reads' own destinations."""
    dests = [r for p in reads for r in dest_regs(p.isa) if r[0] == "v"]
    own = sum(_width(r) for r in dests)
    if wait_row is None:
        return own
    operands: set[tuple[str, int, int]] = set()
    for ins in ctx.following(wait_row, LDS_MFMA_WINDOW_INSTRUCTIONS):
        if ins.category != Category.MFMA:
            continue
        parts = ins.isa.split(None, 1)
        ops = parts[1].split(",") if len(parts) > 1 else []
        for op in ops[1:3]:  # A and B; C/D are the accumulators
            for reg in _regs_of(op):
                if any(reg[0] == d[0] and reg[1] <= d[2] and d[1] <= reg[2] for d in dests):
                    operands.add(reg)
    return max(own, sum(_width(r) for r in operands))


def _regs_of(text: str) -> list[tuple[str, int, int]]:
    return dest_regs("x " + text.strip())


def back_to_back_loads(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no wait on several VMEM loads issued back to back"
    by_wait: dict[int, list[Pair]] = defaultdict(list)
    for pr in pairs:
        by_wait[pr.wait.line_number].append(pr)
    out = []
    for wait_line, group in sorted(by_wait.items(), key=lambda kv: (-_blamed(kv[1]), kv[0])):
        first = min(group, key=lambda p: row_of(p.producer)).producer
        ev = _common_evidence(ctx, group)
        ev.insert(0, Evidence("loads_in_group", len(group), BACK_TO_BACK_MIN_LOADS, ">="))
        ev.append(Evidence("load_rows", ", ".join(f"#{p.producer.line_number}"
                                                   for p in sorted(group, key=lambda p: row_of(p.producer)))))
        c = Candidate(
            ctx.location_of(first), ev, int(_blamed(group)),
            f"{len(group)} loads are issued back to back and waited on together with no compute in "
            "between, so their latencies are exposed at once",
            family=family_of(ctx, group[0].wait, first), sites=sites_of(ctx, group))
        out.append(check_mobility(ctx, rule, c, group, row_of(first)))
    return out


# Moving a load (or its wait) pays only when the work it can move past covers at least this share of
# the stall per wait; below it the load is as early as its address allows (exposed latency).
MIN_MOVABLE_SHARE = 0.1
EXPOSED_TITLE = "exposed load latency: the load cannot move earlier"
EXPOSED_ROOT = (
    "the load is issued as soon as its address is known (right after the wait at {dep} its operands "
    "come from, with only its own address computation in between) and nothing after its wait "
    "works without its data: the {spw:,.0f}-cycle wait is exposed memory latency, not a "
    "scheduling slip")
EXPOSED_FIX = (
    "Do not hoist it (it cannot move): check the roofline first (hotspot plan --pmc with fabric counters; near "
    "the bandwidth peak only fewer bytes help), then give each wave more bytes in flight: more "
    "rows or elements per workgroup or per thread, several independent loads issued before one "
    "wait, or more waves per CU.")
EXPOSED_REMOVABLE = (0.2, 0.6)
EXPOSED_BASIS = ("more independent loads in flight per wave overlap their latencies; what stays is the "
                 "latency of the last one and the bandwidth roof (the estimate is capped there)")


def check_mobility(ctx: PlanContext, rule: Rule, c: Candidate, pairs: list[Pair],
                   load_row: int) -> Candidate:
    """The candidate with its cause checked: the hoist claim bounded by the room the ISA gives, or
    re-stated as exposed latency when there is none."""
    wait = _worst_wait(pairs)
    wait_row = wait.line_number
    waited = [row_of(p) for p in wait.producers if p.category in ANY_LOAD]
    mob = load_mobility(ctx, load_row, wait_row, waited)
    spw = ctx.wait_stall_per_hit(wait)
    if mob is None or not spw:
        return c
    share = mob.cycles / spw
    ev = c.evidence + [Evidence("movable_cycles", round(mob.cycles), round(MIN_MOVABLE_SHARE * spw), ">="),
                       Evidence("stall_per_wait", round(spw))]
    if share >= MIN_MOVABLE_SHARE:
        low, high = c.removable or rule.removable
        bound = min(high, share)
        where = []
        if mob.hoist_rows:
            after = f"right after #{mob.depends_on_wait}" if mob.depends_on_wait is not None else "at the kernel entry"
            where.append(f"issue it {after}, above {len(mob.hoist_rows)} row(s) it does not depend on "
                         f"(#{mob.hoist_rows[0]}-#{mob.hoist_rows[-1]})")
        if mob.independent_rows:
            where.append(f"move {len(mob.independent_rows)} row(s) that do not need its data above the wait "
                         f"(#{mob.independent_rows[0]}-#{mob.independent_rows[-1]})")
        return replace(c, evidence=ev, removable=(min(low, bound / 2), bound),
                       fix_extra=c.fix_extra + (" From the ISA: " + "; or ".join(where) + "." if where else ""),
                       basis=(c.basis or rule.basis) + f"; at most the {mob.cycles:,.0f} cycles of work the "
                             f"load or its wait can move past ({min(1.0, share):.0%} of the {spw:,.0f}-cycle wait)")
    if not all(p.producer.category in VMEM_LOADS for p in pairs):
        return c  # exposed streaming latency is a global-memory verdict; LDS and scalar loads keep theirs
    dep = f"#{mob.depends_on_wait}" if mob.depends_on_wait is not None else "the kernel entry"
    # near the bandwidth roof this exposed latency is what the roof looks like: the roofline item says
    # it (the engine drops this one when `bandwidth-bound` claims a gain)
    return replace(c, evidence=ev, title=EXPOSED_TITLE, root_cause=EXPOSED_ROOT.format(dep=dep, spw=spw),
                   fix=EXPOSED_FIX, fix_extra="", removable=EXPOSED_REMOVABLE, basis=EXPOSED_BASIS,
                   absorbed_by="bandwidth-bound")


def short_load_distance(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no load is waited on with little cover"

    def title(prod: Producer) -> str:
        if _is_small(prod):
            return "scale/address load issued too close to its use"
        if prod.category == Category.LDS:
            return "LDS read waited on right after issue"
        return "load issued too close to its use"

    items = _producer_items(
        ctx, pairs,
        "the load is issued only a few instructions before the s_waitcnt that needs it, so its "
        "latency is exposed", title_of=title)
    out = []
    for c in items:
        n = c.location.line_number
        prod = ctx.instructions.get(n) if n is not None else None
        if prod is not None and _is_small(prod):  # only these are typically known early and loaded late
            c = replace(c, root_cause=c.root_cause + SMALL_LOAD_NOTE)
        if n is not None and not any(is_wait(i.category) for i in ctx.preceding(n, len(ctx.order))):
            c = replace(c, fix_extra=ENTRY_LOAD_NOTE if (c.location.isa or "").startswith("s_")
                        else ENTRY_VMEM_NOTE)
        group = [p for p in pairs if p.producer.line_number == n and
                 any(s.wait_row == p.wait.line_number for s in c.sites)]
        out.append(check_mobility(ctx, rule, c, group, n) if n is not None and group else c)
    return out


SMALL_LOAD_NOTE = (" (scale factors, descriptors and addresses are typical: they are small, known early, "
                   "and loaded late)")


def _is_small(prod: Producer | InstructionStat) -> bool:
    """A scalar or single-dword load: the kind that is known early and loaded late."""
    return prod.category == Category.SMEM or _is_single_dword(prod.isa)
