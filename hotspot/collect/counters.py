"""Counter presets and the split of a counter list into collection passes.

Each pass is one rocprofv3 job (the application re-runs once per job). Never more than
MAX_TCC_PER_PASS TCC counters in one job: larger multi-pass TCC sets have been reported to hang
gfx942 (FORMATS.md §2), and older rocprofv3 releases reject sets that need several hardware passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hotspot.errors import UsageError

MAX_TCC_PER_PASS = 4  # FORMATS.md §2: "keep each collection job to at most ~4 TCC counters"
# Non-TCC counters (SQ_*, GRBM_*, TA_*...) per pass. The SQ block has 8 counter registers
# (rocprofiler-sdk counter definitions); staying at 8 keeps one job one hardware pass for them.
MAX_OTHER_PER_PASS = 8
TCC_PREFIX = "TCC"

# `--pmc-preset l2`: the L2/fabric counters the byte estimates of HARDWARE.md §6 need, per arch.
L2_PRESET: dict[str, tuple[str, ...]] = {
    # 128·BUBBLE + 64·(RDREQ − BUBBLE − RDREQ_32B) + 32·RDREQ_32B (TCC_BUBBLE counts 128 B requests)
    "gfx942": ("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_BUBBLE_sum"),
    # 32·RDREQ_32B + 64·RDREQ_64B + 128·RDREQ_128B. TCC_EA0_RDREQ_DRAM_32B_sum is left out: HARDWARE.md
    # marks it "if present", and an unknown counter name makes the whole rocprofv3 job fail.
    "gfx950": ("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum",
               "TCC_EA0_RDREQ_64B_sum", "TCC_EA0_RDREQ_128B_sum"),
    # MI200 names: TCC_EA_ instead of TCC_EA0_ (HARDWARE.md §6, FORMATS.md §3); no 128 B counter,
    # so the byte estimate is a range.
    "gfx90a": ("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum"),
}
PRESETS = ("l2",)

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\[\d+\])?(:[A-Za-z0-9_=]+)?$")


@dataclass(frozen=True)
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
    if arch is None:
        raise UsageError("--pmc-preset l2 needs the GPU architecture and none was detected",
                         f"pass --arch ({', '.join(sorted(L2_PRESET))})")
    if arch not in L2_PRESET:
        raise UsageError(f"--pmc-preset l2 has no counter set for {arch}",
                         f"pass --pmc COUNTER... explicitly, or --arch one of {', '.join(sorted(L2_PRESET))}")
    return L2_PRESET[arch]


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
