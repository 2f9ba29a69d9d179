"""What `hotspot diff` compares: each side's values per code line (per traced wave, or the analysis'
totals), and the rows (groups of code lines) both sides are summed over."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from operator import itemgetter, sub
from typing import TYPE_CHECKING

from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.att.model import DispatchAnalysis
    from hotspot.att.wave_samples import WaveSamples

TOTAL_FIELDS = ("stall", "latency", "issue", "idle")
# What each total row sums per code line (idle has no per-wave value: never tested).
MEASURE_OF_TOTAL = {"stall": "stall", "latency": "latency", "issue": "issue", "idle": "idle"}


@record(frozen=False)
class Table:
    """A side's values per code line, per sample: the pooled traced waves of its dispatch dirs, or
    one sample (the mean over its analyses) for a saved analysis."""

    stall: dict[int, list[float]]
    latency: dict[int, list[float]]
    hits: dict[int, list[float]]
    blame: dict[int, list[float]]  # producer line -> blamed stall
    n: int  # samples
    per_wave: bool  # samples are traced waves
    analyses: int  # the side's value of a row is Σ over samples / analyses
    # (dispatch index, SE, CU, begin) per traced wave, when the samples carry it
    placement: list[tuple[int, int, int, int]] | None = None


def pooled(parts: list["WaveSamples"]) -> Table:
    if len(parts) == 1:  # one dispatch: its columns as they are (read only from here on)
        one = parts[0]
        n = len(one.waves)
        where = ([(0, *w) for w in one.placement]
                 if one.placement is not None and len(one.placement) == n else None)
        # int columns where floats are declared: only read (summed), never written to
        return Table(one.stall, one.latency, one.hits, one.blame, n, True, 1,  # type: ignore[arg-type]  # int columns, read as floats
                     where)
    total = sum(len(p.waves) for p in parts)
    out: list[dict[int, list[float]]] = [{}, {}, {}, {}]
    offset = 0
    placement: list[tuple[int, int, int, int]] | None = []
    for k, p in enumerate(parts):
        n = len(p.waves)
        columns: tuple[Mapping[int, Sequence[float]], ...] = (p.stall, p.latency, p.hits, p.blame)
        for dest, src in zip(out, columns):
            for line, values in src.items():
                col = dest.get(line)
                if col is None:
                    col = dest[line] = [0] * total
                col[offset:offset + n] = values
        offset += n
        if placement is not None and p.placement is not None and len(p.placement) == n:
            placement.extend((k, *where) for where in p.placement)
        else:
            placement = None
    return Table(out[0], out[1], out[2], out[3], total, True, len(parts), placement)


@record(frozen=False)
class Group:
    kind: str
    label: str
    members: list[int]  # code line numbers (producers for a load)
    measure: str  # stall | latency | issue | idle | blame
    signature: tuple[str, ...] = ()  # ISA mnemonics of the members (to match moved lines)
    per: list[int] | None = None  # lines whose executions divide (a loop: its header), else members
    runs: float = 0.0  # executions of the members per traced wave (to match like with like)


def groups(a: "DispatchAnalysis") -> dict[str, Group]:
    instructions = a.instructions
    isa_of = {i.line_number: i.isa for i in instructions}
    hit_of = {i.line_number: i.hit for i in instructions}
    waves = a.dispatch.waves or 1

    def runs(numbers: list[int]) -> float:
        return sum(hit_of.get(n, 0) for n in numbers) / waves

    def sig(numbers: list[int]) -> tuple[str, ...]:
        return tuple((isa_of.get(n) or "?").split(" ", 1)[0] for n in sorted(numbers))

    executed = sorted(isa_of)
    out: dict[str, Group] = {}
    for name in TOTAL_FIELDS:
        out[f"total:{name}"] = Group("total", name, executed, MEASURE_OF_TOTAL[name])
    cats: defaultdict[str, list[int]] = defaultdict(list)
    for i in instructions:
        cats[i.category].append(i.line_number)
    for c in a.stall_by_category:
        out[f"category:{c.category}"] = Group("category", c.category, cats[c.category], "stall")
    loops = a.loops or []
    spans = [(lp.first_line_number, lp.last_line_number) for lp in loops]
    for lp in loops:
        first, last = lp.first_line_number, lp.last_line_number
        if any(first <= f and l <= last and (f, l) != (first, last) for f, l in spans):
            # an outer loop: its iterations run inner loops whose trips differ from wave to wave
            # (other CTAs, other positions of a mask), so per iteration is not the same work
            continue
        members = [n for n in executed if first <= n <= last]
        label = f"#{first}-#{last}" + (f" {lp.source_range}" if lp.source_range else "")
        out[f"loop:{label}"] = Group("loop", label, members, "stall", sig(members), [first],
                                     runs([first]))
    for s in a.source_lines:
        label = f"{s.file}:{s.line if s.line is not None else '?'}"
        members = list(s.instructions)
        out[f"line:{label}"] = Group("line", label, members, "stall", sig(members), None,
                                     runs(members))
    for b in a.blamed_lines or []:
        members = list(b.instructions)
        out[f"load:{b.label}"] = Group("load", b.label, members, "blame", sig(members), None,
                                       runs(members))
    return out


_first = itemgetter(0)

# column sums already taken in one diff: (id of the column dict, members) -> per-sample sums (the
# totals sum every executed line for stall, latency, issue and their executions alike)
SumMemo = dict[tuple[int, tuple[int, ...]], list[float]]


def series(t: Table, g: Group, memo: SumMemo | None = None, executions: bool = True
           ) -> tuple[list[float], list[float]]:
    """Per sample: the group's cycles and its executions (producers' executions for a load; []
    when `executions` is False)."""
    zeros = [0.0] * t.n
    if g.measure == "issue":  # latency - stall
        lat = column_sum(t.latency, g.members, zeros, memo)
        num = list(map(sub, lat, column_sum(t.stall, g.members, zeros, memo)))
    elif g.measure in ("stall", "latency", "blame"):
        num = column_sum(getattr(t, g.measure), g.members, zeros, memo)
    else:
        num = zeros
    if not executions:
        return num, []
    return num, column_sum(t.hits, g.members if g.per is None else g.per, zeros, memo)


def column_sum(table: dict[int, list[float]], members: list[int], zeros: list[float],
               memo: SumMemo | None = None) -> list[float]:
    key = (id(table), tuple(members)) if memo is not None else None
    if key is not None and memo is not None:
        got = memo.get(key)
        if got is not None:
            return got
    cols = [c for c in map(table.get, members) if c is not None]
    if not cols:
        out = zeros
    elif len(cols) == 1:
        out = list(cols[0])
    elif len(zeros) == 1:  # one sample (a saved analysis' totals): no transposition of columns
        out = [sum(map(_first, cols))]
    else:
        out = list(map(sum, zip(*cols)))
    if key is not None and memo is not None:
        memo[key] = out
    return out


def match(before: dict[str, Group], after: dict[str, Group], same_kernel: bool
           ) -> list[tuple[str | None, str | None, str]]:
    """Pairs (before key, after key, matched_by): by key, then loops, lines and loads present on
    one side only by the ISA mnemonics of their instructions (same kernel)."""
    pairs: list[tuple[str | None, str | None, str]] = [(k, k, "key") for k in before if k in after]
    only_b = [k for k in before if k not in after]
    only_a = [k for k in after if k not in before]
    if same_kernel:
        pool: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for k in sorted(only_a):
            g = after[k]
            if g.kind in ("loop", "line", "load") and g.signature:
                pool.setdefault((g.kind, g.signature), []).append(k)
        still_b = []
        for k in sorted(only_b):
            g = before[k]
            cands = pool.get((g.kind, g.signature)) if g.signature else None
            # of the same mnemonics, the one run about as often: a rarely run line is not a hot one
            alike = [c for c in cands or () if _runs_alike(g.runs, after[c].runs)]
            if alike:
                a = min(alike, key=lambda c: (abs(math.log((after[c].runs + 1) / (g.runs + 1))),
                                              alike.index(c)))
                cands.remove(a)  # type: ignore[union-attr]  # `alike` is non-empty only when cands is a list
                pairs.append((k, a, "mnemonics"))
                only_a.remove(a)
            else:
                still_b.append(k)
        only_b = still_b
        pairs += _loops_by_structure(before, after, only_b, only_a)
    pairs += [(k, None, "before-only") for k in only_b]
    pairs += [(None, k, "after-only") for k in only_a]
    return pairs


# Rows matched by mnemonics run at most this many times as often on one side as on the other (per
# traced wave): an edit that halves a line's trips is a change to compare; a line run once per wave
# against one run thousands of times is another line with the same instructions.
MATCH_RUNS_RATIO = 8.0


def _runs_alike(before: float, after: float) -> bool:
    if before <= 0 or after <= 0:  # a row without executions on a side matches as before
        return True
    return max(before, after) / min(before, after) <= MATCH_RUNS_RATIO


# Loops whose instruction mnemonics are at least this similar (difflib ratio: 2 × matching / total)
# are one loop whose boundaries moved (an instruction added or removed in or around it); below it,
# another loop. A 40-instruction loop with 4 instructions changed is at 0.9.
LOOP_SIMILARITY = 0.6


def _loops_by_structure(before: dict[str, Group], after: dict[str, Group], only_b: list[str],
                        only_a: list[str]) -> list[tuple[str | None, str | None, str]]:
    """Loops left unmatched on both sides paired by structure: the most similar mnemonic sequence
    (at least LOOP_SIMILARITY), ties by position (the k-th loop with the k-th); both lists lose
    the keys paired."""
    import difflib

    loops_b = [k for k in only_b if before[k].kind == "loop"]
    loops_a = [k for k in only_a if after[k].kind == "loop"]
    scored = []
    for i, kb in enumerate(loops_b):
        for j, ka in enumerate(loops_a):
            ratio = difflib.SequenceMatcher(None, before[kb].signature, after[ka].signature,
                                            autojunk=False).ratio()
            if ratio >= LOOP_SIMILARITY:
                scored.append((-ratio, abs(i - j), i, j))
    pairs: list[tuple[str | None, str | None, str]] = []
    used_b: set[int] = set()
    used_a: set[int] = set()
    for _, _, i, j in sorted(scored):
        if i in used_b or j in used_a:
            continue
        used_b.add(i)
        used_a.add(j)
        pairs.append((loops_b[i], loops_a[j], "structure"))
        only_b.remove(loops_b[i])
        only_a.remove(loops_a[j])
    return pairs


def totals_table(analyses: list["DispatchAnalysis"]) -> Table:
    """One sample per code line: the mean over the side's analyses of what analyze reports (all
    waves read, also when the test resamples a spread subset of them)."""
    acc: dict[str, defaultdict[int, float]] = {name: defaultdict(float)
                                               for name in ("stall", "latency", "hits", "blame")}
    k = len(analyses)
    for a in analyses:
        for i in a.instructions:
            n = i.line_number
            for name, value in (("stall", i.stall), ("latency", i.latency), ("hits", i.hit)):
                acc[name][n] += float(value) / k
        for w in a.waits or []:
            for p in w.producers:
                if p.line_number is not None:
                    n = p.line_number
                    acc["blame"][n] += float(p.blamed_stall) / k
    stall, latency, hits, blame = ({n: [v] for n, v in acc[name].items()} for name in acc)
    return Table(stall, latency, hits, blame, 1, False, 1)
