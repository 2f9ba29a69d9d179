"""What rules query: the typed analysis of one dispatch (hotspot/att/model.py) and, with --pmc, the
counter report of its kernel (hotspot/pmc/analysis.py), with the lookups rules share.

Optional sections may be None (a PC-sampling capture, an analysis without wave files); the engine
checks each rule's `reads` before calling it.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from hotspot.arch.classify import Category, mnemonic_of
from hotspot.arch.resources import IsaRegisters, scan_isa_registers
from hotspot.att.findings import E, Finding, finding_of
from hotspot.att.loops import Loop
from hotspot.att.model import DispatchAnalysis
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.att.representativeness import MIN_PASSES_PER_WAVE
from hotspot.att.code_totals import InstructionStat
from hotspot.att.waits.reduce import Producer, WaitBlame
from hotspot.capture import SourceRef
from hotspot.pmc.analysis import KernelReport
from hotspot.plan.location import Location
from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.att.issue_share import TraceCeilings, UnitBusy


class Row(Protocol):
    """An instruction-like row: an instruction, a wait or a producer (read-only members, so a row
    whose line number is always known satisfies it too)."""

    @property
    def line_number(self) -> int | None: ...
    @property
    def isa(self) -> str: ...
    @property
    def source(self) -> SourceRef: ...


@record
class Pair:
    """A wait and one of its producers, with how much of the load's latency was covered (the
    wait rules' shared memo, `PlanContext.wait_pairs`; waits_rules.assign_pairs)."""

    wait: WaitBlame
    producer: Producer
    stall_per_wait: float   # the wait's stall per execution (latency left uncovered)
    cover: float | None     # distance / (distance + stall_per_wait), None without a distance


@record(frozen=False)
class PlanContext:
    analysis: DispatchAnalysis
    pmc: KernelReport | None = None   # the matched pmc kernel report, when --pmc was given
    notes: list[str] = field(default_factory=list)
    # worked out once per plan by the rules that share them
    wait_pairs: dict[str, list[Pair]] | None = None  # waits_rules.assign_pairs
    poll_rows: frozenset[int] | None = None         # spin_rules.spin_rows
    # ceiling_rules.bound_scope, in a 1-tuple (None inside is an answer: no scope at the matrix core)
    matrix_bound: tuple[UnitBusy | None] | None = None

    # --- presence ------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        """The section is in the analysis (an empty list is a real answer: "no waits")."""
        if name == "pmc":
            return self.pmc is not None
        return getattr(self.analysis, name) is not None

    # --- totals --------------------------------------------------------------------------------
    @property
    def total_stall(self) -> int:
        return self.analysis.totals.stall

    @property
    def total_cycles(self) -> int:
        return self.analysis.totals.latency

    @property
    def kernel(self) -> str:
        return self.analysis.dispatch.kernel

    @property
    def traced_waves(self) -> int:
        return self.analysis.dispatch.waves

    @property
    def gfx(self) -> str | None:
        arch = self.analysis.arch
        return arch.gfx if arch.known else None

    def category_stall(self, *categories: Category) -> int:
        wanted = set(categories)
        return sum(c.stall for c in self.analysis.stall_by_category if c.category in wanted)

    # --- instructions (static order = code.json row order) -------------------------------------
    @cached_property
    def instructions(self) -> dict[int, InstructionStat]:
        return {ins.line_number: ins for ins in self.analysis.instructions}

    @cached_property
    def order(self) -> list[int]:
        return sorted(self.instructions)

    @cached_property
    def isa_registers(self) -> IsaRegisters:
        """The highest registers the ISA names: scanned once per plan (every register-cost rule
        asks; a scan of a large kernel's ISA is ~15 ms)."""
        return scan_isa_registers(i.isa for i in self.analysis.instructions)

    def executed(self, category: Category) -> list[InstructionStat]:
        return [i for n, i in sorted(self.instructions.items()) if i.category == category and i.hit > 0]

    def following(self, line_number: int, count: int) -> list[InstructionStat]:
        """The `count` instructions after `line_number` in static order."""
        order = self.order
        try:
            at = order.index(line_number)
        except ValueError:
            return []
        return [self.instructions[n] for n in order[at + 1:at + 1 + count]]

    def preceding(self, line_number: int, count: int) -> list[InstructionStat]:
        """Up to `count` instructions before `line_number`, nearest first."""
        order = self.order
        try:
            at = order.index(line_number)
        except ValueError:
            return []
        return [self.instructions[n] for n in reversed(order[max(0, at - count):at])]

    def hottest(self, *categories: Category) -> InstructionStat | None:
        pool = [i for i in self.instructions.values() if i.category in categories]
        if not pool:
            return None
        return max(pool, key=lambda i: (i.stall, -i.line_number))

    # --- locations -----------------------------------------------------------------------------
    def location_of(self, row: Row | None) -> Location:
        """Location of an instruction-like row (instruction, wait or producer)."""
        if row is None:
            return self.kernel_location()
        return Location(row.source.file, row.source.line, row.line_number, row.isa, self.kernel)

    def kernel_location(self) -> Location:
        return Location(None, None, None, None, self.kernel)

    def line_location(self, file: str | None, line: int | None) -> Location:
        """A source line; the instruction is its hottest row."""
        rows = [i for i in self.instructions.values()
                if file is not None and i.source.file == file and i.source.line == line]
        best = max(rows, key=lambda i: (i.stall, -i.line_number), default=None)
        return Location(file, line, best.line_number if best else None, best.isa if best else None,
                        self.kernel)

    # --- sections from other analyses ----------------------------------------------------------
    def waits(self) -> list[WaitBlame]:
        return self.analysis.waits or []

    def wait_stall_per_hit(self, wait: WaitBlame) -> float | None:
        return wait.stall / wait.hits if wait.hits else None

    def repeats(self, lp: Loop) -> bool:
        """A backward branch closes a loop when both its header and the branch itself run at least
        `MIN_PASSES_PER_WAVE` (2) times per wave that takes it. A one-shot backward `s_branch`
        (a prologue block laid out after the loop jumping back to its head, taken once per wave)
        runs once even when its target is a real loop's header (whose count it then shares)."""
        branch = self.instructions.get(lp.last_line_number)
        runs = branch.hit / lp.waves if branch is not None and lp.waves else lp.iterations_per_wave
        return lp.iterations_per_wave >= MIN_PASSES_PER_WAVE and runs >= MIN_PASSES_PER_WAVE

    @cached_property
    def loops(self) -> list[Loop]:
        """The loops that repeat (`repeats`): a one-shot backward branch closes no loop."""
        return [lp for lp in self.analysis.loops or [] if self.repeats(lp)]

    @cached_property
    def one_shot_branches(self) -> list[Loop]:
        """Backward branches taken once per wave (not loops; listed so rules can say why)."""
        return [lp for lp in self.analysis.loops or [] if not self.repeats(lp)]

    @cached_property
    def loop_ranges(self) -> list[tuple[int, int]]:
        """Inclusive code.json row ranges of the loops that repeat (`loops`)."""
        return [(lp.first_line_number, lp.last_line_number) for lp in self.loops]

    def mfma_loop_containing(self, *line_numbers: int) -> tuple[int, int] | None:
        """The innermost loop that holds every given row and at least one executed MFMA."""
        mfma_rows = [i.line_number for i in self.executed(Category.MFMA)]
        best: tuple[int, int] | None = None
        for lo, hi in self.loop_ranges:
            if all(lo <= n <= hi for n in line_numbers) and any(lo <= m <= hi for m in mfma_rows):
                if best is None or hi - lo < best[1] - best[0]:
                    best = (lo, hi)
        return best

    @property
    def ceilings(self) -> TraceCeilings | None:
        """MFMA/VALU issue share per SIMD over the kernel and each loop, from the wave pass
        (hotspot/att/issue_share.py); None without wave files."""
        return self.analysis.ceilings

    def occupancy(self) -> DispatchOccupancy | None:
        return self.analysis.occupancy

    def finding(self, kind: type[E]) -> tuple[Finding, E] | None:
        """The finding whose evidence is a `kind` (one record per kind of finding), with it typed."""
        return finding_of(self.analysis.findings, kind)

    def mix_dynamic(self, category: Category) -> int:
        return next((m.dynamic for m in self.analysis.instruction_mix if m.category == category), 0)


def in_loop(ctx: PlanContext, row: int | None) -> bool:
    return row is not None and any(lo <= row <= hi for lo, hi in ctx.loop_ranges)


def is_kernarg_load(ctx: PlanContext, wait: WaitBlame, producer: Producer) -> bool:
    """An `s_load` (not `s_buffer_load`) whose load and wait lie outside every loop: a kernel
    argument or a descriptor read once per wave."""
    mn = mnemonic_of(producer.isa)
    return (producer.category == Category.SMEM and mn.startswith("s_load")
            and not in_loop(ctx, producer.line_number) and not in_loop(ctx, wait.line_number))
