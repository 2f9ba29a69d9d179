"""The `collect` Result: what a run did, or with --dry-run what it would do (serialized in field
order: the JSON contract is docs/schema/collect.md). run.json holds the same parts."""

from __future__ import annotations

from hotspot.record import record
from hotspot.result import JsonObject, JsonValue


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


@record
class DryPhase:
    """One rocprofv3 run --dry-run would start."""

    name: str
    argv: list[str]
    input_file: str | None
    yaml: str | None  # the input file's text


@record
class CollectRun:
    dry_run: bool  # False
    run_dir: str
    run_json: str
    status: str
    command: list[str]
    rocprofv3: str | None
    decoder: str | None
    kernel: JsonObject | None  # the kernel chosen (discovery's row, or --kernel's regex)
    kernels: list[KernelRowOut]
    iterations: IterationsOut | None
    phases: list[PhaseOut]
    dispatches: list[DispatchOut]
    chosen_dispatch: DispatchOut | None
    pmc: JsonObject | None  # the counter passes and their analysis
    analysis: JsonValue  # the chosen dispatch's analyze data (analysis.json), or null
    analysis_error: JsonObject | None


@record
class CollectDryRun:
    dry_run: bool  # True
    run_dir: str
    command: list[str]
    rocprofv3: str
    decoder: str | None
    kernel: JsonObject | None
    iterations: IterationsOut | None
    pmc_plan: list[list[str]] | None
    pmc_plan_text: str | None
    phases: list[DryPhase]
