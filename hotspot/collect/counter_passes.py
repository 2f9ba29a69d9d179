"""Counter presets and the split of a counter list into collection passes.

Each pass is one rocprofv3 job (the application re-runs once per job). Never more than
MAX_TCC_PER_PASS TCC counters in one job: larger multi-pass TCC sets have been reported to hang
gfx942 (FORMATS.md §2), and older rocprofv3 releases reject sets that need several hardware passes.
"""

from __future__ import annotations

import re

from hotspot.arch.targets import TARGETS, counters_for_arch
from hotspot.errors import UsageError
from hotspot.record import record

MAX_TCC_PER_PASS = 4  # FORMATS.md §2: "keep each collection job to at most ~4 TCC counters"
# Non-TCC counters (SQ_*, GRBM_*, TA_*...) per pass. The SQ block has 8 counter registers
# (rocprofiler-sdk counter definitions); staying at 8 keeps one job one hardware pass for them.
MAX_OTHER_PER_PASS = 8
TCC_PREFIX = "TCC"

PRESETS = ("l2",)

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\[\d+\])?(:[A-Za-z0-9_=]+)?$")


@record
class PassPlan:
    passes: tuple[tuple[str, ...], ...]

    @property
    def counters(self) -> tuple[str, ...]:
        return tuple(c for p in self.passes for c in p)

    def describe(self) -> str:
        n = len(self.passes)
        lines = [f"counter plan: {len(self.counters)} counters in {n} pass{'es' if n != 1 else ''} "
                 f"(the application runs {n} more time{'s' if n != 1 else ''}; at most {MAX_TCC_PER_PASS} "
                 f"TCC counters per pass, never in the ATT run)"]
        lines += [f"  pass {i}: {' '.join(p)}" for i, p in enumerate(self.passes, start=1)]
        return "\n".join(lines)


def parse_counter_args(values: list[str]) -> list[str]:
    """`--pmc A --pmc B,C --pmc "D E"` → [A, B, C, D, E], first occurrence kept, names checked."""
    out: list[str] = []
    for value in values:
        for name in re.split(r"[,\s]+", value.strip()):
            if not name:
                continue
            if not _NAME.match(name):
                raise UsageError(f"--pmc {name!r} is not a counter name",
                                 "use rocprofv3 counter names such as TCC_HIT_sum (list them with "
                                 "`rocprofv3 --list-avail`)")
            if name not in out:
                out.append(name)
    return out


def preset_counters(preset: str, arch: str | None) -> tuple[str, ...]:
    if preset not in PRESETS:
        raise UsageError(f"--pmc-preset {preset!r} is unknown", f"choose one of: {', '.join(PRESETS)}")
    presets = l2_presets()
    if arch is None:
        raise UsageError("--pmc-preset l2 needs the GPU architecture and none was detected",
                         f"pass --arch ({', '.join(sorted(presets))})")
    spec = counters_for_arch(arch)
    if spec is None or not spec.l2_preset:
        raise UsageError(f"--pmc-preset l2 has no counter set for {arch}",
                         f"pass --pmc COUNTER... explicitly, or --arch one of {', '.join(sorted(presets))}")
    return spec.l2_preset


def l2_presets() -> dict[str, tuple[str, ...]]:
    """gfx target -> its `--pmc-preset l2` counters (hotspot/arch/counter_semantics.py via the arch table)."""
    return {t.gfx: t.counters.l2_preset for t in TARGETS.values() if t.counters and t.counters.l2_preset}


def is_tcc(name: str) -> bool:
    return name.upper().startswith(TCC_PREFIX)


def split_passes(counters: list[str] | tuple[str, ...]) -> PassPlan:
    """Greedy, order-preserving: a counter goes into the first pass with room for its kind."""
    passes: list[list[str]] = []
    for name in counters:
        limit = MAX_TCC_PER_PASS if is_tcc(name) else MAX_OTHER_PER_PASS
        kind = is_tcc(name)
        for p in passes:
            if sum(1 for c in p if is_tcc(c) == kind) < limit:
                p.append(name)
                break
        else:
            passes.append([name])
    return PassPlan(tuple(tuple(p) for p in passes))
