"""Pure aggregation of code rows: totals, stall by category, per instruction, per line, per file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from operator import attrgetter

from hotspot.arch.classify import CATEGORIES, Category, classify
from hotspot.capture import NO_SOURCE, CodeRow, SourceRef
from hotspot.record import record


@record
class Totals:
    hit: int
    latency: int
    stall: int
    idle: int
    issue: int  # latency - stall


@record
class CategoryStall:
    category: Category
    stall: int
    share: float  # of total stall, 0..1
    latency: int
    hit: int
    instructions: int  # executed code rows in this category


@record
class InstructionStat:
    line_number: int
    isa: str
    category: Category
    hit: int
    latency: int
    stall: int
    idle: int
    issue: int
    share: float  # of total stall, 0..1
    stall_per_hit: float
    source: SourceRef  # the leaf source line, written "file:line" ("" without source)
    direct_to_lds: bool = False


@record
class SourceLineStat:
    file: str
    line: int | None
    stall: int
    latency: int
    hit: int
    idle: int
    share: float
    stall_rate: float  # stall / latency
    stall_per_hit: float
    dominant_category: str
    categories: dict[str, int]  # category -> stall on this line
    instructions: list[int]  # code.json line numbers (ordinals) of its instructions
    chains: list[str] = field(default_factory=list)  # distinct inline chains seen for this line


@record
class FileStat:
    file: str
    stall: int
    latency: int
    share: float
    lines: int


@record
class MixEntry:
    category: Category
    static: int  # rows of this category in the listing
    executed: int  # of those, rows with hit > 0
    dynamic: int  # Σ hit


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def totals_of(rows: Sequence[CodeRow]) -> Totals:
    hit = sum(r.hit for r in rows)
    lat = sum(r.latency for r in rows)
    st = sum(r.stall for r in rows)
    idle = sum(r.idle for r in rows)
    return Totals(hit, lat, st, idle, lat - st)


def _order(cat: str) -> int:
    return CATEGORIES.index(cat)


def stall_by_category(rows: Sequence[CodeRow], total_stall: int) -> list[CategoryStall]:
    acc: dict[Category, list[int]] = {}
    for r in rows:
        if r.hit == 0 and r.latency == 0:
            continue
        a = acc.setdefault(classify(r.isa).category, [0, 0, 0, 0])
        a[0] += r.stall
        a[1] += r.latency
        a[2] += r.hit
        a[3] += 1
    out = [CategoryStall(c, s, _ratio(s, total_stall), lat, h, n) for c, (s, lat, h, n) in acc.items()]
    out.sort(key=lambda c: (-c.stall, -c.latency, _order(c.category)))
    return out


def instruction_stats(rows: Sequence[CodeRow], total_stall: int) -> list[InstructionStat]:
    out = []
    for r in rows:
        if r.hit == 0 and r.latency == 0:
            continue
        c = classify(r.isa)
        out.append(InstructionStat(r.line_number, r.isa, c.category, r.hit, r.latency, r.stall,
                                   r.idle, r.issue, _ratio(r.stall, total_stall),
                                   _ratio(r.stall, r.hit), r.source.label if r.source else NO_SOURCE,
                                   c.direct_to_lds))
    # Order (-stall, -latency, line_number) by three stable sorts, least significant first: a key
    # tuple per instruction would cost ~100 bytes each for the length of the sort.
    out.sort(key=attrgetter("line_number"))
    out.sort(key=attrgetter("latency"), reverse=True)
    out.sort(key=attrgetter("stall"), reverse=True)
    return out


def source_line_stats(rows: Sequence[CodeRow], total_stall: int) -> list[SourceLineStat]:
    groups: dict[tuple[str, int | None], list[CodeRow]] = {}
    for r in rows:
        if r.source is None or (r.hit == 0 and r.latency == 0):
            continue
        groups.setdefault((r.source.file, r.source.line), []).append(r)
    out = []
    for (file, line), members in groups.items():
        cats: dict[str, int] = {}
        for r in members:
            cat = classify(r.isa).category
            cats[cat] = cats.get(cat, 0) + r.stall
        stall = sum(r.stall for r in members)
        lat = sum(r.latency for r in members)
        hit = sum(r.hit for r in members)
        dominant = min(cats, key=lambda c: (-cats[c], _order(c)))
        chains = sorted({" -> ".join(r.source.chain) for r in members if r.source and r.source.chain})
        out.append(SourceLineStat(
            file, line, stall, lat, hit, sum(r.idle for r in members), _ratio(stall, total_stall),
            _ratio(stall, lat), _ratio(stall, hit), dominant,
            dict(sorted(cats.items(), key=lambda kv: (-kv[1], _order(kv[0])))),
            [r.line_number for r in members], chains))
    out.sort(key=lambda s: (-s.stall, -s.latency, s.file, s.line if s.line is not None else -1))
    return out


def file_stats(lines: Sequence[SourceLineStat], total_stall: int) -> list[FileStat]:
    acc: dict[str, list[int]] = {}
    for s in lines:
        a = acc.setdefault(s.file, [0, 0, 0])
        a[0] += s.stall
        a[1] += s.latency
        a[2] += 1
    out = [FileStat(f, st, lat, _ratio(st, total_stall), n) for f, (st, lat, n) in acc.items()]
    out.sort(key=lambda f: (-f.stall, -f.latency, f.file))
    return out


def instruction_mix(rows: Sequence[CodeRow]) -> list[MixEntry]:
    acc: dict[Category, list[int]] = {}
    for r in rows:
        a = acc.setdefault(classify(r.isa).category, [0, 0, 0])
        a[0] += 1
        a[1] += 1 if r.hit > 0 else 0
        a[2] += r.hit
    out = [MixEntry(c, s, e, d) for c, (s, e, d) in acc.items()]
    out.sort(key=lambda m: (-m.dynamic, -m.static, _order(m.category)))
    return out
