"""`kernel_iteration_range`: a SET of 1-based per-kernel iteration numbers (FORMATS.md §2).

rocprofv3 reads tokens `N` and `A-B`; brackets and commas only separate. `"[1, [3-4]]"` is {1, 3, 4}
(the cold first iteration included), not "skip warm-up". We parse what the user typed, write the
set back in rocprofv3's own notation, and describe it in plain words.
"""

from __future__ import annotations

import re

from hotspot.errors import UsageError
from hotspot.record import record

# How many iterations the default traces: two steady-state dispatches give a cross-check between
# them while keeping the trace (one dispatch dir per iteration) small.
DEFAULT_TRACED_ITERATIONS = 2
# Beyond this many traced iterations the run gets slow and the output large: say so.
MANY_ITERATIONS = 16

_TOKEN = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*")
_SEPARATORS = re.compile(r"[\[\],\s]+")


@record
class IterationPlan:
    iterations: tuple[int, ...]  # sorted, unique, 1-based
    range_text: str  # what goes into kernel_iteration_range
    description: str  # plain words, printed before the run
    calls: int | None  # discovered call count, when known


def parse_spec(spec: str) -> tuple[int, ...]:
    """`"3,5-7"`, `"[3, [5-7]]"` or `"3 5 6 7"` → (3, 5, 6, 7). Rejects anything else."""
    found: set[int] = set()
    for part in _SEPARATORS.split(spec):
        if not part:
            continue
        m = _TOKEN.fullmatch(part)
        if not m:
            raise UsageError(f"--iterations {spec!r}: cannot read {part!r}",
                             "write 1-based iteration numbers and ranges, e.g. --iterations 3,5-7")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 1 or hi < lo:
            raise UsageError(f"--iterations {spec!r}: {part!r} is not a 1-based range A-B with A <= B",
                             "iterations count from 1, e.g. --iterations 2-3")
        found.update(range(lo, hi + 1))
    if not found:
        raise UsageError(f"--iterations {spec!r}: no iteration given",
                         "an empty set makes ATT trace only iteration 1; say --iterations 1 if you mean it")
    return tuple(sorted(found))


def to_range_text(iterations: tuple[int, ...]) -> str:
    """rocprofv3 notation: single numbers plain, runs of 3+ as `[A-B]`, e.g. (2, 3, 5, 6, 7) → "[2, 3, [5-7]]"."""
    parts: list[str] = []
    runs: list[list[int]] = []
    for n in iterations:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    for run in runs:
        if len(run) >= 3:
            parts.append(f"[{run[0]}-{run[-1]}]")
        else:
            parts.extend(str(n) for n in run)
    return "[" + ", ".join(parts) + "]"


def _words(iterations: tuple[int, ...]) -> str:
    if len(iterations) == 1:
        return f"iteration {iterations[0]}"
    if len(iterations) <= 4:
        return "iterations " + ", ".join(map(str, iterations[:-1])) + f" and {iterations[-1]}"
    return f"{len(iterations)} iterations ({to_range_text(iterations)})"


def default_iterations(calls: int | None) -> tuple[tuple[int, ...], str]:
    """Two steady-state iterations from the middle of the run; never iteration 1 when calls > 2."""
    if calls is None:
        its = tuple(range(2, 2 + DEFAULT_TRACED_ITERATIONS))
        return its, "call count unknown (discovery skipped): skipping the cold first iteration"
    if calls <= DEFAULT_TRACED_ITERATIONS:
        return tuple(range(1, calls + 1)), (f"the kernel runs only {calls} time(s): iteration 1 is "
                                            "included and may show cold-cache/first-launch effects")
    first = max(2, (calls + 1) // 2)
    first = min(first, calls - DEFAULT_TRACED_ITERATIONS + 1)
    return tuple(range(first, first + DEFAULT_TRACED_ITERATIONS)), \
        "steady state from the middle of the run; iteration 1 (warm-up) is skipped"


def plan_iterations(spec: str | None, calls: int | None) -> IterationPlan:
    if spec is not None:
        its = parse_spec(spec)
        why = "as given by --iterations"
    else:
        its, why = default_iterations(calls)
    of = f" of {calls} calls" if calls is not None else ""
    text = f"tracing {_words(its)}{of} ({why}); kernel_iteration_range {to_range_text(its)}"
    if calls is not None and its[-1] > calls:
        text += f"; WARNING: the kernel ran only {calls} times in discovery, so iterations above {calls} trace nothing"
    return IterationPlan(its, to_range_text(its), text, calls)
