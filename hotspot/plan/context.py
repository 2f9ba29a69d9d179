"""A read-only view over the plain analysis JSON (`Result.plain_data()`) that rules query.

Every optional section may be missing or null; accessors return None/empty instead of raising, and
the engine checks each rule's `reads` before calling it.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property

from hotspot.capture import parse_source
from hotspot.plan.model import Location
from hotspot.result import JsonObject
from hotspot.record import record

MFMA_CATEGORY = "mfma"


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@record(frozen=False)
class PlanContext:
    data: JsonObject
    pmc: JsonObject | None = None   # the matched pmc kernel report (plain), when --pmc was given
    notes: list[str] = field(default_factory=list)

    # --- presence ------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        if name == "pmc":
            return self.pmc is not None
        value = self.data.get(name)
        if value is None:
            return False
        if isinstance(value, (list, dict)) and name in ("waits", "loops", "barriers"):
            return True  # an empty list is a real answer ("no waits"), not a missing section
        return True

    # --- totals --------------------------------------------------------------------------------
    @property
    def total_stall(self) -> int:
        return int(_num((self.data.get("totals") or {}).get("stall")) or 0)

    @property
    def total_cycles(self) -> int:
        return int(_num((self.data.get("totals") or {}).get("latency")) or 0)

    @property
    def kernel(self) -> str:
        return str((self.data.get("dispatch") or {}).get("kernel") or "")

    @property
    def gfx(self) -> str | None:
        arch = self.data.get("arch") or {}
        return arch.get("gfx") if arch.get("known") else None

    def category_stall(self, *categories: str) -> int:
        wanted = set(categories)
        return int(sum(_num(c.get("stall")) or 0 for c in self.data.get("stall_by_category") or []
                       if c.get("category") in wanted))

    # --- instructions (static order = code.json row order) -------------------------------------
    @cached_property
    def instructions(self) -> dict[int, JsonObject]:
        out: dict[int, JsonObject] = {}
        for ins in self.data.get("instructions") or []:
            n = ins.get("line_number")
            if isinstance(n, int):
                out[n] = ins
        return out

    @cached_property
    def order(self) -> list[int]:
        return sorted(self.instructions)

    def executed(self, category: str) -> list[JsonObject]:
        return [i for n, i in sorted(self.instructions.items())
                if i.get("category") == category and (i.get("hit") or 0) > 0]

    def following(self, line_number: int, count: int) -> list[JsonObject]:
        """The `count` instructions after `line_number` in static order."""
        order = self.order
        try:
            at = order.index(line_number)
        except ValueError:
            return []
        return [self.instructions[n] for n in order[at + 1:at + 1 + count]]

    def preceding(self, line_number: int, count: int) -> list[JsonObject]:
        """Up to `count` instructions before `line_number`, nearest first."""
        order = self.order
        try:
            at = order.index(line_number)
        except ValueError:
            return []
        return [self.instructions[n] for n in reversed(order[max(0, at - count):at])]

    def hottest(self, *categories: str) -> JsonObject | None:
        pool = [i for i in self.instructions.values() if i.get("category") in categories]
        if not pool:
            return None
        return max(pool, key=lambda i: (i.get("stall") or 0, -(i.get("line_number") or 0)))

    # --- locations -----------------------------------------------------------------------------
    def location_of(self, row: JsonObject | None) -> Location:
        """Location of an instruction-like dict (instruction, wait or producer)."""
        if row is None:
            return self.kernel_location()
        src = parse_source(str(row.get("source") or ""))
        n = row.get("line_number")
        isa = row.get("isa")
        if isa is None and isinstance(n, int) and n in self.instructions:
            isa = self.instructions[n].get("isa")
        return Location(src.file if src else None, src.line if src else None,
                        n if isinstance(n, int) else None, isa, self.kernel)

    def kernel_location(self) -> Location:
        return Location(None, None, None, None, self.kernel)

    def line_location(self, file: str | None, line: int | None) -> Location:
        """A source line; the instruction is its hottest row."""
        rows = [i for i in self.instructions.values()
                if (src := parse_source(str(i.get("source") or ""))) and src.file == file
                and src.line == line]
        best = max(rows, key=lambda i: (i.get("stall") or 0, -(i.get("line_number") or 0)), default=None)
        return Location(file, line, best.get("line_number") if best else None,
                        best.get("isa") if best else None, self.kernel)

    # --- sections from other analyses (shapes tolerated, see docs/schema/plan.md) ----------------
    def waits(self) -> list[JsonObject]:
        return [w for w in self.data.get("waits") or [] if isinstance(w, dict)]

    def wait_stall_per_hit(self, wait: JsonObject) -> float | None:
        stall = _num(wait.get("stall"))
        hit = _num(wait.get("hits", wait.get("hit")))
        if hit is None:
            n = wait.get("line_number")
            hit = _num(self.instructions.get(n, {}).get("hit")) if isinstance(n, int) else None
        if stall is None or not hit:
            return None
        return stall / hit

    @cached_property
    def loop_ranges(self) -> list[tuple[int, int]]:
        """Inclusive code.json row ranges of the loops (issue 7 `data.loops`)."""
        out: list[tuple[int, int]] = []
        for lp in self.data.get("loops") or []:
            rng = _loop_range(lp)
            if rng is not None:
                out.append(rng)
        return out

    def mfma_loop_containing(self, *line_numbers: int) -> tuple[int, int] | None:
        """The innermost loop that holds every given row and at least one executed MFMA."""
        mfma_rows = [i["line_number"] for i in self.executed(MFMA_CATEGORY)]
        best: tuple[int, int] | None = None
        for lo, hi in self.loop_ranges:
            if all(lo <= n <= hi for n in line_numbers) and any(lo <= m <= hi for m in mfma_rows):
                if best is None or hi - lo < best[1] - best[0]:
                    best = (lo, hi)
        return best

    def occupancy(self) -> JsonObject | None:
        occ = self.data.get("occupancy")
        return occ if isinstance(occ, dict) else None

    def finding(self, finding_id: str) -> JsonObject | None:
        for f in self.data.get("findings") or []:
            if isinstance(f, dict) and f.get("id") == finding_id:
                return f
        return None

    def mix_dynamic(self, category: str) -> int:
        for m in self.data.get("instruction_mix") or []:
            if m.get("category") == category:
                return int(_num(m.get("dynamic")) or 0)
        return 0


def _in_loop(ctx: PlanContext, row: object) -> bool:
    return isinstance(row, int) and any(lo <= row <= hi for lo, hi in ctx.loop_ranges)


def is_kernarg_load(ctx: PlanContext, wait: JsonObject, producer: JsonObject) -> bool:
    """An `s_load` (not `s_buffer_load`) whose load and wait lie outside every loop: a kernel
    argument or a descriptor read once per wave."""
    mn = str(producer.get("isa") or "").split(None, 1)[0].lower() if producer.get("isa") else ""
    return (producer.get("category") in ("smem",) and mn.startswith("s_load")
            and not _in_loop(ctx, producer.get("line_number")) and not _in_loop(ctx, wait.get("line_number")))


_RANGE_KEYS = (("first_line_number", "last_line_number"), ("start_line_number", "end_line_number"),
               ("start", "end"), ("first", "last"))


def _loop_range(lp: object) -> tuple[int, int] | None:
    if not isinstance(lp, dict):
        return None
    for key in ("line_numbers", "line_range", "rows"):
        v = lp.get(key)
        if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v):
            return (min(v), max(v))
        if isinstance(v, dict):
            inner = _loop_range(v)
            if inner is not None:
                return inner
    for a, b in _RANGE_KEYS:
        lo, hi = lp.get(a), lp.get(b)
        if isinstance(lo, int) and isinstance(hi, int):
            return (min(lo, hi), max(lo, hi))
    return None


def stall_of(value: object) -> float:
    """A stall figure that may be a number or a dict with a `stall` field."""
    if isinstance(value, dict):
        return _num(value.get("stall")) or _num(value.get("cycles")) or 0.0
    return _num(value) or 0.0


def breakdown_classes(lb: object) -> dict[str, float]:
    """`data.lgkm_breakdown` as {producer class: stall}. Accepts {class: n}, {class: {stall}},
    {classes: ...} and [{class|name, stall}] shapes."""
    if isinstance(lb, dict) and isinstance(lb.get("classes"), (dict, list)):
        return breakdown_classes(lb["classes"])
    if isinstance(lb, dict) and isinstance(lb.get("by_class"), (dict, list)):
        return breakdown_classes(lb["by_class"])
    out: dict[str, float] = {}
    if isinstance(lb, dict):
        for k, v in lb.items():
            if k in ("lds", "smem", "cross-lane", "message", "flat", "unknown", "other"):
                out[k] = stall_of(v)
    elif isinstance(lb, list):
        for e in lb:
            if isinstance(e, dict):
                name = e.get("class") or e.get("name") or e.get("producer_class")
                if isinstance(name, str):
                    out[name] = out.get(name, 0.0) + stall_of(e)
    return out
