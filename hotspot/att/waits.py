"""Wait attribution: which memory instructions each executed `s_waitcnt` waited for.

Producers come from the wave's own `waitcnt` edges (the decoder's memory-op -> s_waitcnt arrows,
FORMATS.md §1.2) when the wave file has them, otherwise from a static reconstruction that replays the
gfx9 counter rules over the wave's executed order (HARDWARE.md §3):

- `s_load*`/`s_store*`/`s_buffer_*` (SMEM), `s_sendmsg*` and every `ds_*` push onto the lgkm list;
  `buffer_*`/`global_*`/`scratch_*` onto the vm list; `flat_*` onto both.
- at `s_waitcnt ...cnt(N)` the oldest `len - N` entries of that list are popped and become the
  wait's producers (lgkm first, then vm: the decoder writes them in that order).
- an outstanding SMEM makes lgkm out of order; the decoder still pops the oldest entries, so do we,
  and such waits are counted (`out_of_order_waits`) because their producers are a best guess.

Each wait instance's stall is split equally over its producers (docs/waits.md); instances with nothing
outstanding go to an explicit "no producer" bucket, so per waitcnt the blame always sums to its stall.
The per-wave functions below are the hot path of the wave pass: plain lists and dicts, no objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hotspot.att.classify import WAIT_CATEGORIES, classify, mnemonic_of
from hotspot.att.model import CodeRow

# Counter lists (bit mask of what an instruction increments).
VM = 1
LGKM = 2
# Roles of a code row in the wave pass (only rows with a role are kept in the lookup dicts).
ROLE_MEM = 1
ROLE_WAIT = 2
ROLE_BARRIER = 3
NOT_WAITED = -1  # threshold of a counter an s_waitcnt does not name
NO_PRODUCER = -1  # producer line of the "nothing outstanding" bucket

# The decoder's push rules (FORMATS.md §1.2), by mnemonic prefix.
_VM_PREFIXES = ("buffer_", "tbuffer_", "global_", "scratch_")
_FLAT_PREFIX = "flat_"
_LGKM_PREFIXES = ("ds_", "s_sendmsg")

# lgkm breakdown classes, in report order; `vmem` (the vm producers of mixed waits) and `none`
# (instances with nothing outstanding) are reported beside them, so everything sums to the stall.
LGKM_CLASSES: tuple[str, ...] = ("lds", "smem", "cross-lane", "message", "flat")
BREAKDOWN_CLASSES: tuple[str, ...] = LGKM_CLASSES + ("vmem", "none")
LGKM_WAIT_CATEGORIES = frozenset({"wait-lgkmcnt", "wait-mixed"})


@dataclass(frozen=True)
class LineTables:
    """Per code row facts the wave pass needs, classified once up front (picklable).

    Only rows that matter to the pass appear: `roles` maps line_number -> ROLE_*; `pushes` the
    counter mask of memory rows; `scalar` the SMEM rows (they make lgkm out of order); `waits` the
    (vm threshold, lgkm threshold) of each s_waitcnt (NOT_WAITED when a counter is not named).
    """

    roles: dict[int, int]
    pushes: dict[int, int]
    scalar: frozenset[int]
    waits: dict[int, tuple[int, int]]


def counter_mask(isa: str) -> tuple[int, bool]:
    """(VM/LGKM mask, is_scalar_memory) of one instruction under the decoder's gfx9 rules."""
    mn = mnemonic_of(isa)
    if mn.startswith(_FLAT_PREFIX):
        return VM | LGKM, False
    if mn.startswith(_VM_PREFIXES):
        return VM, False
    if classify(isa).category == "smem":
        return LGKM, True
    if mn.startswith(_LGKM_PREFIXES):
        return LGKM, False
    return 0, False


def wait_thresholds(isa: str) -> tuple[int, int] | None:
    """(vm N, lgkm N) of an s_waitcnt; None for rows that are not gfx9 s_waitcnt."""
    c = classify(isa)
    if c.mnemonic != "s_waitcnt":
        return None
    named = dict(c.wait_counters)
    if not named:
        # `s_waitcnt 0` (all fields zero) waits for every counter to drain.
        operand = isa.strip()[len(c.mnemonic):].strip()
        return (0, 0) if operand in ("0", "0x0") else (NOT_WAITED, NOT_WAITED)
    vm = named.get("vmcnt", NOT_WAITED)
    lgkm = named.get("lgkmcnt", NOT_WAITED)
    return vm, lgkm


def build_tables(rows: Iterable[CodeRow]) -> LineTables:
    roles: dict[int, int] = {}
    pushes: dict[int, int] = {}
    scalar: set[int] = set()
    waits: dict[int, tuple[int, int]] = {}
    for r in rows:
        cat = classify(r.isa).category
        if cat in WAIT_CATEGORIES:
            roles[r.line_number] = ROLE_WAIT
            waits[r.line_number] = wait_thresholds(r.isa) or (NOT_WAITED, NOT_WAITED)
            continue
        if cat == "barrier":
            roles[r.line_number] = ROLE_BARRIER
            continue
        mask, is_scalar = counter_mask(r.isa)
        if mask:
            roles[r.line_number] = ROLE_MEM
            pushes[r.line_number] = mask
            if is_scalar:
                scalar.add(r.line_number)
    return LineTables(roles, pushes, frozenset(scalar), waits)


# ---------------------------------------------------------------------------------------------
# per wave (hot path)


def reconstruct(ins: list[list[int]], tables: LineTables
                ) -> tuple[list[tuple[int, list[int]]], list[int], int]:
    """Replay vm/lgkm over one wave's executed order.

    Returns (entries, wait_positions, out_of_order_waits): one entry (wait index, producer indices)
    per non-empty pop, lgkm before vm within one wait, in execution order; the index of every wait
    instance; and how many lgkm waits with N > 0 ran while an SMEM was outstanding.
    """
    roles, pushes, waits, scalar = tables.roles, tables.pushes, tables.waits, tables.scalar
    vm: list[int] = []
    lg: list[int] = []
    smem_pending = False
    entries: list[tuple[int, list[int]]] = []
    positions: list[int] = []
    ooo = 0
    for idx, rec in enumerate(ins):
        line = rec[4]
        role = roles.get(line)
        if role is None:
            continue
        if role == ROLE_MEM:
            mask = pushes[line]
            if mask & VM:
                vm.append(idx)
            if mask & LGKM:
                lg.append(idx)
                if line in scalar:
                    smem_pending = True
        elif role == ROLE_WAIT:
            positions.append(idx)
            vm_n, lg_n = waits[line]
            if lg_n >= 0:
                if lg_n > 0 and smem_pending:
                    ooo += 1
                k = len(lg) - lg_n
                if k > 0:
                    entries.append((idx, lg[:k]))
                    del lg[:k]
                if not lg:
                    smem_pending = False
            if vm_n >= 0:
                k = len(vm) - vm_n
                if k > 0:
                    entries.append((idx, vm[:k]))
                    del vm[:k]
    return entries, positions, ooo


def edge_keys(edges: list[Any]) -> list[tuple[int, tuple[int, ...]]]:
    """Decoder edges as (waitcnt line, producer lines) keys."""
    return [(int(w), tuple(int(p[0]) for p in prods)) for w, prods in edges]


def entry_keys(ins: list[list[int]], entries: list[tuple[int, list[int]]]
               ) -> list[tuple[int, tuple[int, ...]]]:
    return [(ins[w][4], tuple(ins[p][4] for p in prods)) for w, prods in entries]


def align_edges(ins: list[list[int]], ekeys: list[tuple[int, tuple[int, ...]]],
                entries: list[tuple[int, list[int]]]
                ) -> tuple[list[tuple[int, list[int]]], int]:
    """Place the decoder's edges on wait instances; returns (entries, edges matched by reconstruction).

    Edges carry line numbers only. Where they equal the reconstruction (all corpus waves), the
    reconstruction's instance indices are used. Otherwise the two sequences are aligned; an edge
    the reconstruction did not produce goes on the next executed instance of its waitcnt after the
    previous placed edge, each producer on its latest issue before that wait.
    """
    skeys = entry_keys(ins, entries)
    if ekeys == skeys:
        return entries, len(ekeys)
    import difflib  # only for waves whose edges differ from the reconstruction

    out: list[tuple[int, list[int]]] = []
    matched = 0
    placed_from = 0
    sm = difflib.SequenceMatcher(None, ekeys, skeys, autojunk=False)
    for tag, e0, e1, s0, _s1 in sm.get_opcodes():
        if tag == "equal":
            for j in range(e1 - e0):
                out.append(entries[s0 + j])
                placed_from = entries[s0 + j][0]
            matched += e1 - e0
            continue
        for wline, plines in ekeys[e0:e1]:
            placed = _place_edge(ins, wline, plines, placed_from)
            if placed is not None:
                out.append(placed)
                placed_from = placed[0]
    return out, matched


def _place_edge(ins: list[list[int]], wline: int, plines: tuple[int, ...], start: int
                ) -> tuple[int, list[int]] | None:
    n = len(ins)
    w = start
    while w < n and ins[w][4] != wline:
        w += 1
    if w >= n:
        return None
    prods: list[int] = []
    for pline in plines:
        p = w - 1
        while p >= 0 and (ins[p][4] != pline or p in prods):
            p -= 1
        if p >= 0:
            prods.append(p)
    return w, prods


def blame_wave(ins: list[list[int]], entries: list[tuple[int, list[int]]], positions: list[int],
               acc: "BlameAccumulator") -> None:
    """Split each wait instance's stall over its producers into `acc` (integers only)."""
    producers: dict[int, list[int]] = {}
    for w, prods in entries:
        got = producers.get(w)
        if got is None:
            producers[w] = list(prods)
        else:
            got.extend(prods)
    blame, wait_stall, wait_hits = acc.blame, acc.wait_stall, acc.wait_hits
    dcyc, dins = acc.dist_cycles, acc.dist_instructions
    for w in positions:
        rec = ins[w]
        wline, stall, wtime = rec[4], rec[2], rec[0]
        wait_stall[wline] = wait_stall.get(wline, 0) + stall
        wait_hits[wline] = wait_hits.get(wline, 0) + 1
        prods = producers.get(w)
        if not prods:
            key = (wline, NO_PRODUCER, 1)
            blame[key] = blame.get(key, 0) + stall
            continue
        k = len(prods)
        for p in prods:
            prec = ins[p]
            pline = prec[4]
            key = (wline, pline, k)
            blame[key] = blame.get(key, 0) + stall
            dkey = (wline, pline)
            hc = dcyc.get(dkey)
            if hc is None:
                hc = dcyc[dkey] = {}
                dins[dkey] = {}
            c = wtime - prec[0] - prec[2]
            hc[c] = hc.get(c, 0) + 1
            hi = dins[dkey]
            d = w - p - 1
            hi[d] = hi.get(d, 0) + 1


@dataclass
class BlameAccumulator:
    """Mergeable integer bookkeeping of wait blame over any set of waves.

    blame[(wait line, producer line, k)] = Σ stall of wait instances that had k producers; the
    producer's exact share is Σ_k blame / k (a Fraction), so conservation is exact.
    """

    blame: dict[tuple[int, int, int], int]
    wait_stall: dict[int, int]
    wait_hits: dict[int, int]
    dist_cycles: dict[tuple[int, int], dict[int, int]]  # histogram of issue-to-wait cycles
    dist_instructions: dict[tuple[int, int], dict[int, int]]  # histogram of instructions between
    waves_edges: int = 0
    waves_static: int = 0
    edge_entries: int = 0
    edge_entries_reconstructed: int = 0  # edges the static reconstruction reproduced exactly
    out_of_order_waits: int = 0

    @classmethod
    def empty(cls) -> "BlameAccumulator":
        return cls({}, {}, {}, {}, {})

    def add_wave(self, ins: list[list[int]], edges: list[Any], tables: LineTables) -> None:
        entries, positions, ooo = reconstruct(ins, tables)
        self.add_reconstructed(ins, edge_keys(edges) if edges else None, entries, positions, ooo)

    def add_reconstructed(self, ins: list[list[int]],
                          ekeys: list[tuple[int, tuple[int, ...]]] | None,
                          entries: list[tuple[int, list[int]]], positions: list[int], ooo: int
                          ) -> None:
        """add_wave given the wave's reconstruction (shared by waves of one executed sequence)
        and its decoder edges as keys (None: the wave has no edges)."""
        self.out_of_order_waits += ooo
        if ekeys is not None:
            entries, matched = align_edges(ins, ekeys, entries)
            self.waves_edges += 1
            self.edge_entries += len(ekeys)
            self.edge_entries_reconstructed += matched
        else:
            self.waves_static += 1
        blame_wave(ins, entries, positions, self)

    def merge(self, other: "BlameAccumulator") -> None:
        for key, v in other.blame.items():
            self.blame[key] = self.blame.get(key, 0) + v
        for line, v in other.wait_stall.items():
            self.wait_stall[line] = self.wait_stall.get(line, 0) + v
        for line, v in other.wait_hits.items():
            self.wait_hits[line] = self.wait_hits.get(line, 0) + v
        for mine, theirs in ((self.dist_cycles, other.dist_cycles),
                             (self.dist_instructions, other.dist_instructions)):
            for key, hist in theirs.items():
                h = mine.setdefault(key, {})
                for value, count in hist.items():
                    h[value] = h.get(value, 0) + count
        self.waves_edges += other.waves_edges
        self.waves_static += other.waves_static
        self.edge_entries += other.edge_entries
        self.edge_entries_reconstructed += other.edge_entries_reconstructed
        self.out_of_order_waits += other.out_of_order_waits


# ---------------------------------------------------------------------------------------------
# reduce: typed results


@dataclass(frozen=True)
class Producer:
    line_number: int | None  # None: the "no producer" bucket (nothing outstanding)
    isa: str
    category: str  # stall taxonomy category of the producer ("none" for the bucket)
    source: str
    blamed_stall: float  # cycles of the wait's stall split onto this producer
    share: float  # of this waitcnt's stall, 0..1
    instances: int  # (wait instance, producer instance) pairs
    median_distance_cycles: float | None  # wait record time - (producer time + stall)
    median_distance_instructions: float | None  # executed instructions strictly between them


@dataclass(frozen=True)
class WaitBlame:
    line_number: int
    isa: str
    category: str
    source: str
    stall: int  # Σ stall of this s_waitcnt over the waves read
    hits: int
    share: float  # of the total stall over the waves read
    producers: list[Producer]


@dataclass(frozen=True)
class BlamedLine:
    label: str  # "file:line", or "#<line_number> <isa>" when the producer has no source
    file: str
    line: int | None
    blamed_stall: float
    share: float  # of all s_waitcnt stall over the waves read
    categories: dict[str, float]  # producer category -> blamed stall
    instructions: list[int]  # producer line numbers (code.json ordinals)
    median_distance_cycles: float | None
    median_distance_instructions: float | None


@dataclass(frozen=True)
class LgkmClass:
    producer_class: str  # one of LGKM_CLASSES
    stall: float  # blamed stall, cycles
    share: float  # of the breakdown's `stall` (all wait-lgkmcnt/wait-mixed stall), 0..1


@dataclass(frozen=True)
class LgkmBreakdown:
    stall: int  # Σ stall of wait-lgkmcnt and wait-mixed instructions over the waves read
    lgkm_stall: float  # blamed on lgkm producers: Σ classes
    classes: list[LgkmClass]  # lds, smem, cross-lane, message, flat (value desc)
    vmem_stall: float  # blamed on the vm producers of wait-mixed instructions
    no_producer_stall: float  # wait instances with nothing outstanding
    cross_lane_share: float  # of lgkm_stall
    smem_share: float  # of lgkm_stall


def hist_median(hist: dict[int, int]) -> float | None:
    """Median of a value -> count histogram (mean of the two middle values for even totals)."""
    n = sum(hist.values())
    if n == 0:
        return None
    lo_rank, hi_rank = (n - 1) // 2, n // 2
    lo = hi = None
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if lo is None and seen > lo_rank:
            lo = value
        if seen > hi_rank:
            hi = value
            break
    assert lo is not None and hi is not None
    return (lo + hi) / 2


def _merge_hists(hists: Iterable[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for h in hists:
        for v, c in h.items():
            out[v] = out.get(v, 0) + c
    return out


def exact_blame(acc: BlameAccumulator) -> dict[tuple[int, int], Fraction]:
    """(wait line, producer line) -> exact blamed stall."""
    out: dict[tuple[int, int], Fraction] = {}
    for (wline, pline, k), stall in acc.blame.items():
        key = (wline, pline)
        out[key] = out.get(key, Fraction(0)) + Fraction(stall, k)
    return out


def _ratio(a: float, b: float) -> float:
    return float(Fraction(a) / Fraction(b)) if b else 0.0


def _label(row: CodeRow | None) -> str:
    return row.source.label if row is not None and row.source is not None else ""


def wait_blames(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow], total_stall: int
                ) -> list[WaitBlame]:
    exact = exact_blame(acc)
    by_wait: dict[int, list[tuple[int, Fraction]]] = {}
    for (wline, pline), value in exact.items():
        by_wait.setdefault(wline, []).append((pline, value))
    out: list[WaitBlame] = []
    for wline, stall in acc.wait_stall.items():
        wrow = rows_by_line.get(wline)
        producers = []
        for pline, value in by_wait.get(wline, []):
            if pline == NO_PRODUCER:
                producers.append(Producer(None, "(nothing outstanding)", "none", "", float(value),
                                          _ratio(value, stall), 0, None, None))
                continue
            prow = rows_by_line.get(pline)
            key = (wline, pline)
            hc = acc.dist_cycles.get(key, {})
            producers.append(Producer(
                pline, prow.isa if prow else "", classify(prow.isa).category if prow else "other",
                _label(prow), float(value), _ratio(value, stall), sum(hc.values()),
                hist_median(hc), hist_median(acc.dist_instructions.get(key, {}))))
        producers.sort(key=lambda p: (-p.blamed_stall, p.line_number is None, p.line_number or 0))
        out.append(WaitBlame(wline, wrow.isa if wrow else "",
                             classify(wrow.isa).category if wrow else "other", _label(wrow), stall,
                             acc.wait_hits.get(wline, 0), _ratio(stall, total_stall), producers))
    out.sort(key=lambda w: (-w.stall, w.line_number))
    return out


def blamed_lines(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow]) -> list[BlamedLine]:
    """Producer source lines (instructions when no source) ranked by the waiting they cost."""
    exact = exact_blame(acc)
    waits_total = sum(acc.wait_stall.values())
    groups: dict[str, dict[str, Any]] = {}
    for (wline, pline), value in exact.items():
        if pline == NO_PRODUCER:
            continue
        prow = rows_by_line.get(pline)
        if prow is not None and prow.source is not None:
            label, file, line = prow.source.label, prow.source.file, prow.source.line
        else:
            label, file, line = f"#{pline} {prow.isa if prow else ''}".rstrip(), "", None
        g = groups.setdefault(label, {"file": file, "line": line, "blamed": Fraction(0), "cats": {},
                                      "instructions": set(), "keys": []})
        g["blamed"] += value
        cat = classify(prow.isa).category if prow else "other"
        g["cats"][cat] = g["cats"].get(cat, Fraction(0)) + value
        g["instructions"].add(pline)
        g["keys"].append((wline, pline))
    out = []
    for label, g in groups.items():
        hc = _merge_hists(acc.dist_cycles.get(k, {}) for k in g["keys"])
        hi = _merge_hists(acc.dist_instructions.get(k, {}) for k in g["keys"])
        cats = {c: float(v) for c, v in sorted(g["cats"].items(), key=lambda kv: (-kv[1], kv[0]))}
        out.append(BlamedLine(label, g["file"], g["line"], float(g["blamed"]),
                              _ratio(g["blamed"], waits_total), cats, sorted(g["instructions"]),
                              hist_median(hc), hist_median(hi)))
    out.sort(key=lambda b: (-b.blamed_stall, b.label))
    return out


def producer_class(isa: str) -> str:
    """lgkm breakdown class of a producer; vm-only producers (of mixed waits) are `vmem`."""
    cat = classify(isa).category
    if cat in ("lds", "smem", "cross-lane", "flat", "message"):
        return cat
    return "vmem"


def lgkm_breakdown(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow]) -> LgkmBreakdown | None:
    exact = exact_blame(acc)
    lgkm_waits = {line for line in acc.wait_stall
                  if line in rows_by_line and classify(rows_by_line[line].isa).category
                  in LGKM_WAIT_CATEGORIES}
    if not lgkm_waits:
        return None
    stall = sum(acc.wait_stall[line] for line in lgkm_waits)
    by_class: dict[str, Fraction] = {c: Fraction(0) for c in BREAKDOWN_CLASSES}
    for (wline, pline), value in exact.items():
        if wline not in lgkm_waits:
            continue
        if pline == NO_PRODUCER:
            by_class["none"] += value
            continue
        prow = rows_by_line.get(pline)
        cls = producer_class(prow.isa) if prow else "vmem"
        by_class[cls] += value
    lgkm_stall = sum(by_class[c] for c in LGKM_CLASSES)
    classes = [LgkmClass(c, float(by_class[c]), _ratio(by_class[c], stall)) for c in LGKM_CLASSES]
    classes.sort(key=lambda c: (-c.stall, LGKM_CLASSES.index(c.producer_class)))
    return LgkmBreakdown(stall, float(lgkm_stall), classes, float(by_class["vmem"]),
                         float(by_class["none"]), _ratio(by_class["cross-lane"], lgkm_stall),
                         _ratio(by_class["smem"], lgkm_stall))


@dataclass(frozen=True)
class Attribution:
    """How the wait blame was obtained, over which waves."""

    waves_read: int
    waves_total: int
    sampled: bool  # --max-waves read a subset
    waves_with_edges: int  # blame from the decoder's waitcnt edges
    waves_reconstructed: int  # no edges: blame from the static counter reconstruction
    edge_entries: int
    edge_entries_reconstructed: int  # edge entries the reconstruction reproduced exactly
    reconstruction_agreement: float | None  # edge_entries_reconstructed / edge_entries
    out_of_order_waits: int  # lgkmcnt(N>0) waits while an SMEM was outstanding (best-guess producers)
    waits_stall: int  # Σ stall of every s_waitcnt over the waves read
    no_producer_stall: float  # part of it with nothing outstanding


def attribution(acc: BlameAccumulator, waves_read: int, waves_total: int) -> Attribution:
    no_prod = sum(Fraction(v, k) for (w, p, k), v in acc.blame.items() if p == NO_PRODUCER)
    return Attribution(
        waves_read, waves_total, waves_read < waves_total, acc.waves_edges, acc.waves_static,
        acc.edge_entries, acc.edge_entries_reconstructed,
        acc.edge_entries_reconstructed / acc.edge_entries if acc.edge_entries else None,
        acc.out_of_order_waits, sum(acc.wait_stall.values()), float(no_prod))
