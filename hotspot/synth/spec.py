"""Parameters of a synthetic ui_output dispatch: program, waves, layout, sources, timing model."""

from __future__ import annotations

from dataclasses import field, replace
from typing import Sequence, Union

from hotspot.errors import UsageError
from hotspot.synth.isa import ARCHES
from hotspot.record import record


@record
class InstructionMix:
    """Static instruction counts of a generated kernel (rows of code.json, not executions).

    `s_waitcnt` rows are not counted here: they are inserted where a consumer needs a producer's
    result, with the vmcnt/lgkmcnt values a compiler would use. The loop's counter update and
    compare come out of the `salu` budget; its back-edge branch is extra (not in `branches`).
    """

    vmem_loads: int = 8
    vmem_stores: int = 2
    lds_reads: int = 8
    lds_writes: int = 4
    bpermutes: int = 2
    smem_loads: int = 3
    mfma: int = 16
    valu: int = 40
    salu: int = 16
    branches: int = 2          # forward s_cbranch_execz, taken per execution with `branch_taken`
    barriers: int = 2
    loop_trips: int = 8        # iterations of the main loop body; 1 = straight-line code
    mfma_op: str | None = None  # None: the arch default (isa.DEFAULT_MFMA)
    branch_taken: float = 0.25
    vmem_style: str = "buffer"  # "buffer" (buffer_load_dwordx4 ... offen) or "global"

    def total(self) -> int:
        return (self.vmem_loads + self.vmem_stores + self.lds_reads + self.lds_writes + self.bpermutes
                + self.smem_loads + self.mfma + self.valu + self.salu + self.branches + self.barriers)

    def scaled(self, instructions: int) -> "InstructionMix":
        """This mix's proportions stretched to about `instructions` static rows (waits not counted)."""
        base = self.total()
        if instructions <= 0 or base == 0:
            raise UsageError(f"instruction count must be positive, got {instructions}")
        f = instructions / base

        def s(n: int, lo: int = 0) -> int:
            return max(lo, round(n * f)) if n else 0

        return replace(self, vmem_loads=s(self.vmem_loads), vmem_stores=s(self.vmem_stores),
                       lds_reads=s(self.lds_reads), lds_writes=s(self.lds_writes),
                       bpermutes=s(self.bpermutes), smem_loads=s(self.smem_loads, 1), mfma=s(self.mfma),
                       valu=s(self.valu), salu=s(self.salu), branches=s(self.branches),
                       barriers=s(self.barriers))


@record
class Instr:
    """One row of an explicit program: instruction text and its Source column ("" = no debug info)."""

    isa: str
    source: str = ""


@record
class Loop:
    """Rows `start..end` (0-based indexes into the instruction list, inclusive) run `trips` times;
    row `end` must be the back-edge branch (taken trips-1 times, then not taken)."""

    start: int
    end: int
    trips: int


@record
class ExplicitProgram:
    """A hand-written schedule: exact rows, so tests know every hit count and waitcnt edge."""

    instructions: tuple[Instr, ...]
    loops: tuple[Loop, ...] = ()

    @staticmethod
    def of(rows: Sequence[Union[Instr, tuple[str, str], str]],
           loops: Sequence[Union[Loop, tuple[int, int, int]]] = ()) -> "ExplicitProgram":
        instrs = tuple(r if isinstance(r, Instr) else Instr(r) if isinstance(r, str) else Instr(*r) for r in rows)
        lps = tuple(lp if isinstance(lp, Loop) else Loop(*lp) for lp in loops)
        return ExplicitProgram(instrs, lps)


Program = Union[InstructionMix, ExplicitProgram]


@record
class Layout:
    """Where traced waves sit: shader engines, SIMDs per CU, wave slots per SIMD, the traced CU.

    Waves are dealt round-robin over (se, simd, slot); each slot runs its waves one after another.
    `other_cus` adds untraced CUs to occupancy.json (it covers every CU of the traced SEs).
    """

    ses: tuple[int, ...] = (0, 1, 2, 3)
    simds: int = 4
    slots: int = 2
    cu: int = 1
    other_cus: tuple[int, ...] = (0, 2)


@record
class SourceSpec:
    """Source files behind the rows. `debug_info=False` leaves the Source column empty."""

    files: tuple[str, ...] = ("/work/synth/kernels/synth_kernel.py", "/work/synth/lib/helpers.py")
    debug_info: bool = True
    inline_chains: bool = False   # some rows get "leaf.h:L -> mid.h:L -> kernel:L"
    snapshots: bool = False       # write snapshots.json + source_<i>_<basename>


@record
class LatencyModel:
    """Cycle ranges (inclusive, rounded to the 4-cycle issue grid) the timing model draws from.

    Values are plausible for CDNA3/4 (compare the corpus: vec_add waits ~900 cycles on three s_loads and
    ~1,200 on two buffer loads; preshuffle_gemm waits ~50 on a ds_read); they are not measurements of a
    specific GPU.
    """

    issue: int = 4
    vmem_load: tuple[int, int] = (480, 1400)
    vmem_store: tuple[int, int] = (300, 900)
    smem: tuple[int, int] = (200, 950)
    lds: tuple[int, int] = (48, 128)
    bperm: tuple[int, int] = (40, 72)
    barrier: tuple[int, int] = (8, 600)
    pipe_stall: tuple[int, int] = (4, 96)       # VMEM/LDS/VALU issue back-pressure when it happens
    pipe_stall_chance: float = 0.08
    salu_stall_chance: float = 0.03
    gap: tuple[int, int] = (4, 40)              # IDLE before an instruction (arbiter, i-cache)
    gap_chance: float = 0.04
    branch_gap: tuple[int, int] = (8, 48)       # refetch after a taken branch
    first_issue: tuple[int, int] = (16, 64)     # wave begin -> first instruction
    launch_gap: tuple[int, int] = (32, 640)     # previous wave end -> next wave begin in a slot
    slot_stagger: int = 124                     # dispatch cadence between slots at kernel start
    se_stagger: int = 752


@record
class DispatchSpec:
    kernel: str = "synth_kernel_0"
    arch: str = "gfx950"
    program: Program = field(default_factory=InstructionMix)
    waves: int = 16
    layout: Layout = field(default_factory=Layout)
    sources: SourceSpec = field(default_factory=SourceSpec)
    demangled: str | None = None   # Source of the kernel pseudo row (real: "" or the demangled name)
    empty: bool = False            # an "empty trace": code null, no wave files
    waitcnt_edges: bool = True     # False: wave files carry no "waitcnt" key
    latency: LatencyModel = field(default_factory=LatencyModel)
    variants: int = 64             # distinct simulated wave timings, reused (time-shifted) beyond that
    agent_info: bool = False       # write <out>/<prefix>_agent_info.csv beside the dispatch dir
    prefix: str = "synth"
    agent_handle: int = 5600
    dispatch_id: int = 1
    codeobj: int = 1
    base_vaddr: int = 0x1600
    start_time: int = 4000         # shader clock of the first wave's dispatch

    def validate(self) -> None:
        if self.arch not in ARCHES:
            raise UsageError(f"unknown arch {self.arch!r}", f"use one of {', '.join(ARCHES)}")
        if self.waves < 0 or (self.waves == 0 and not self.empty):
            raise UsageError(f"wave count must be positive, got {self.waves}", "use --empty for an empty trace")
        lay = self.layout
        if not lay.ses or lay.simds < 1 or lay.slots < 1:
            raise UsageError("layout needs at least one SE, one SIMD and one slot")
        if lay.cu in lay.other_cus:
            raise UsageError(f"other_cus must not contain the traced CU {lay.cu}")
        if self.variants < 1:
            raise UsageError("variants must be >= 1")
        if self.dispatch_id < 0 or self.agent_handle < 0:
            raise UsageError("dispatch id and agent handle must be non-negative")

    @property
    def dir_name(self) -> str:
        return f"ui_output_agent_{self.agent_handle}_dispatch_{self.dispatch_id}"
