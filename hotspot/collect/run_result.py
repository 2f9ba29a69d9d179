"""The `collect` Result: what a run did, or with --dry-run what it would do (serialized in field
order: the JSON contract is docs/schema/collect.md). run.json holds the same parts."""

from __future__ import annotations

from dataclasses import field

from hotspot.record import record


@record
class SkippedKernel:
    """A kernel discovery passed over, and the --skip/plumbing pattern that matched it."""

    name: str
    pattern: str


@record
class KernelGiven:
    """The kernel named with --kernel (discovery skipped)."""

    name: str | None  # None: known only by the regex
    regex: str
    source: str  # "--kernel"
    reason: str


@record
class KernelDiscovered:
    """The kernel discovery chose: its row of the kernel table and why."""

    name: str
    regex: str
    source: str  # "discovery"
    reason: str
    calls: int
    total_ns: int | float
    avg_ns: float
    pct: float
    skipped: list[SkippedKernel]


Kernel = KernelDiscovered | KernelGiven  # the kernel chosen (discovery's row, or --kernel's regex)


@record
class RocprofOut:
    path: str
    version: str | None


@record
class ErrorOut:
    """Why the run (run.json `error`) or the chosen dispatch's analysis failed."""

    code: str
    exit_code: int
    message: str
    hint: str


@record
class PmcErrorOut:
    code: str
    message: str
    hint: str


@record(frozen=False)
class PmcOut:
    """The counter passes and their analysis (run.json holds the same without `analysis`)."""

    counters: list[str]
    passes: list[list[str]]
    csv_files: list[str]
    analysis: object  # hotspot pmc's data for the CSV files, or None
    # set only when the counter analysis failed: until then it is not in the JSON (an init=False
    # field that is never assigned is not in the instance's __dict__, which orjson writes)
    analysis_error: PmcErrorOut | None = field(default=None, init=False)

    def passes_only(self) -> PmcPasses:
        out = PmcPasses(self.counters, self.passes, self.csv_files)
        if "analysis_error" in self.__dict__:
            out.analysis_error = self.analysis_error
        return out


@record(frozen=False)
class PmcPasses:
    """run.json `pmc`: PmcOut without the analysis (that is in pmc_analysis.json)."""

    counters: list[str]
    passes: list[list[str]]
    csv_files: list[str]
    analysis_error: PmcErrorOut | None = field(default=None, init=False)  # as PmcOut's


@record
class IterationsOut:
    """Which calls of the kernel are traced (--iterations)."""

    set: list[int]  # 1-based, sorted
    range: str  # what goes into kernel_iteration_range
    description: str
    calls: int | None  # discovered call count, when known


@record
class KernelRowOut:
    """One row of the discovery run's kernel table."""

    name: str
    family: str | None
    calls: int
    total_ns: int | float
    avg_ns: float
    pct: float
    regex: str


@record
class DispatchOut:
    """One dispatch dir the trace wrote."""

    path: str
    agent: int
    dispatch_id: int
    waves: int
    executed_instructions: int
    instructions_hit: int
    empty: bool
    truncated: bool
    note: str | None


@record
class PhaseOut:
    """One rocprofv3 run of the collection, as it ended."""

    name: str
    status: str
    exit_code: int | None
    elapsed_ns: int | None
    argv: list[str]
    input_file: str | None
    output_dir: str
    stdout: str
    stderr: str


@record(frozen=False)
class Phase:
    """run.json: one rocprofv3 run, updated as it starts, ends and when the run directory moves."""

    name: str
    argv: list[str]
    input_file: str | None
    yaml: str | None
    output_dir: str
    stdout: str
    stderr: str
    started_at: str
    status: str = "running"
    exit_code: int | None = None
    elapsed_ns: int | None = None

    def out(self) -> PhaseOut:
        return PhaseOut(self.name, self.status, self.exit_code, self.elapsed_ns, self.argv, self.input_file,
                        self.output_dir, self.stdout, self.stderr)


@record
class DryPhase:
    """One rocprofv3 run --dry-run would start."""

    name: str
    argv: list[str]
    input_file: str | None
    # the input file's text, printed as the lines it will be written as (hotspot/render/escape.py)
    yaml: str | None = field(metadata={"text_block": True})


@record
class CollectRun:
    dry_run: bool  # False
    run_dir: str
    run_json: str
    status: str
    command: list[str]
    rocprofv3: RocprofOut
    decoder: str | None
    kernel: Kernel | None
    kernels: list[KernelRowOut]
    iterations: IterationsOut | None
    phases: list[PhaseOut]
    dispatches: list[DispatchOut]
    chosen_dispatch: DispatchOut | None
    pmc: PmcOut | None
    analysis: object  # the chosen dispatch's analyze data (analysis.json), or None
    analysis_error: ErrorOut | None


@record
class CollectDryRun:
    dry_run: bool  # True
    run_dir: str
    command: list[str]
    rocprofv3: str
    decoder: str | None
    kernel: Kernel | None  # given with --kernel (a dry run discovers nothing)
    iterations: IterationsOut | None
    pmc_plan: list[list[str]] | None
    pmc_plan_text: str | None
    phases: list[DryPhase]
