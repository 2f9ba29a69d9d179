"""Resolve a kernel's resources (registers, LDS, workgroup size) from several sources.

Trust order (issue 3 point 4): rocpd `kernels` (its LDS includes dynamic LDS) > kernel trace CSV >
counter collection CSV. The ISA register scan of code.json is a floor: it cannot see LDS, the SGPR
allocation or AGPRs of vgpr-form MFMA, but when it shows more VGPRs than a profiler source claims
(older rocprofv3 halves gfx950 counts and reports Accum 0) the ISA wins and a warning says so.
Pure functions: the caller reads the files and builds `ResourceCandidate`s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import field

from hotspot.arch.occupancy_model import align_to
from hotspot.arch.targets import SEPARATE, TESTED_GFX, ArchTarget, get_target
from hotspot.record import record

# Source kinds, most trusted first.
ROCPD = "rocpd"
KERNEL_TRACE = "kernel_trace"
COUNTER_COLLECTION = "counter_collection"
ISA = "isa"
SOURCE_TRUST: tuple[str, ...] = (ROCPD, KERNEL_TRACE, COUNTER_COLLECTION)
# Sources whose SGPR count is the granulated allocation, implicit SGPRs included.
_SGPR_IS_ALLOCATION = frozenset(SOURCE_TRUST)
# Sources whose LDS figure is static LDS only (rocprofv3 LDS_Block_Size; FORMATS.md §3).
_STATIC_LDS_ONLY = frozenset({KERNEL_TRACE, COUNTER_COLLECTION})
# Without a known arch, assume the implicit SGPR count every CDNA target may add (HARDWARE.md §1).


@record
class ResourceCandidate:
    vgpr: int | None
    agpr: int | None
    sgpr: int | None
    lds_bytes: int | None
    wg_threads: int | None
    source: str          # one of SOURCE_TRUST
    detail: str = ""     # e.g. the file it came from, for the "source" labels

    def label(self) -> str:
        return f"{self.source} ({self.detail})" if self.detail else self.source


@record
class IsaRegisters:
    """Highest register index the disassembly names (None = that class never appears)."""

    max_vgpr_used: int | None
    max_agpr_used: int | None
    max_sgpr_used: int | None

    @property
    def vgpr_count(self) -> int:
        return 0 if self.max_vgpr_used is None else self.max_vgpr_used + 1

    @property
    def agpr_count(self) -> int:
        return 0 if self.max_agpr_used is None else self.max_agpr_used + 1

    @property
    def sgpr_count(self) -> int:
        return 0 if self.max_sgpr_used is None else self.max_sgpr_used + 1


@record
class Resources:
    vgpr: int | None
    agpr: int | None
    sgpr: int | None
    lds_bytes: int | None
    wg_threads: int | None
    sgpr_includes_implicit: bool     # True when sgpr is an allocation (profiler sources)
    source: dict[str, str]           # field -> source label ("isa (code.json)", "rocpd (x.db)", ...)
    warnings: tuple[str, ...] = field(default_factory=tuple)


# `v7`, `v[4:11]`, `a0`, `a[0:15]`, `s3`, `s[0:1]`; also `acc5` (old AGPR spelling). The look-behind
# keeps `vcc`, `exec`, `vmcnt(0)`, `s_waitcnt`, `lgkmcnt`, `0x1a` and label names out.
_REGISTER = re.compile(r"(?<![\w.$])(?P<cls>acc|[vas])(?:(?P<one>\d+)|\[(?P<lo>\d+):(?P<hi>\d+)\])(?!\w)")


def _instruction_operands(line: str) -> str:
    text = line.split(";", 1)[0].split("//", 1)[0].strip()  # drop comments
    parts = text.split(None, 1)
    return parts[1] if len(parts) == 2 else ""


def scan_isa_registers(isa_lines: Iterable[str]) -> IsaRegisters:
    """Highest VGPR/AGPR/SGPR index in disassembly lines (the END of `v[a:b]` ranges counts)."""
    best: dict[str, int | None] = {"v": None, "a": None, "s": None}
    for line in isa_lines:
        if not line or line.lstrip().startswith(";"):
            continue  # kernel-symbol pseudo rows and comments
        for m in _REGISTER.finditer(_instruction_operands(line)):
            cls = "a" if m["cls"] == "acc" else m["cls"]
            index = int(m["one"] if m["one"] is not None else m["hi"])
            current = best[cls]
            best[cls] = index if current is None else max(current, index)
    return IsaRegisters(best["v"], best["a"], best["s"])


def _isa_total(target: ArchTarget, vgpr: int, agpr: int) -> int:
    # Same quantity the occupancy model uses (HARDWARE.md §1).
    if target.vgpr_file == SEPARATE:
        return max(vgpr, agpr)
    return align_to(vgpr, target.agpr_base_align) + agpr if agpr > 0 else vgpr


def resolve_resources(candidates: Sequence[ResourceCandidate], isa: IsaRegisters | None = None,
                      target: ArchTarget | str | None = None) -> Resources:
    """Per field, the most trusted source that has it; then the ISA scan as a floor.

    Registers come as a pair (arch VGPRs, AGPRs) from one source. If the ISA needs more VGPR room
    than that source claims (compared as the total that decides occupancy), the ISA's counts are used
    and a warning names both numbers. Sources claiming more than the ISA shows are kept: the ISA
    cannot see every register a kernel allocates.
    """
    for c in candidates:
        if c.source not in SOURCE_TRUST:
            raise ValueError(f"unknown resource source {c.source!r}; expected one of {SOURCE_TRUST}")
    if isinstance(target, str):
        target = get_target(target)
    # Undecided arch: the ISA-vs-profiler register comparison below is the same on every tested target
    # (one unified file, AGPRs from alignTo(arch VGPRs, 4)), so any of them decides it.
    arch = target or get_target(TESTED_GFX[0])
    ordered = sorted(candidates, key=lambda c: SOURCE_TRUST.index(c.source))
    source: dict[str, str] = {}
    warnings: list[str] = []

    def first(attr: str) -> ResourceCandidate | None:
        return next((c for c in ordered if getattr(c, attr) is not None), None)

    vgpr = agpr = sgpr = lds = wg = None
    sgpr_includes_implicit = False
    reg = first("vgpr")
    if reg is not None:
        vgpr = reg.vgpr
        source["vgpr"] = reg.label()
        agpr = reg.agpr
        if agpr is None:
            agpr = 0
            warnings.append(f"{reg.label()} gives no AGPR (Accum_VGPR) count: assuming 0 AGPRs.")
        source["agpr"] = reg.label()
    s = first("sgpr")
    if s is not None:
        sgpr, sgpr_includes_implicit = s.sgpr, s.source in _SGPR_IS_ALLOCATION
        source["sgpr"] = s.label()
    ls = first("lds_bytes")
    if ls is not None:
        lds = ls.lds_bytes
        source["lds_bytes"] = ls.label()
        if ls.source in _STATIC_LDS_ONLY:
            warnings.append(f"LDS from {ls.label()} is static LDS only (dynamic LDS is not included).")
    w = first("wg_threads")
    if w is not None:
        wg = w.wg_threads
        source["wg_threads"] = w.label()

    if isa is not None:
        vgpr, agpr = _apply_isa_vgprs(arch, isa, vgpr, agpr, source, warnings)
        if isa.max_sgpr_used is not None:
            isa_sgpr = isa.sgpr_count
            if sgpr is None:
                sgpr, sgpr_includes_implicit = isa_sgpr, False
                source["sgpr"] = ISA
                warnings.append(f"SGPRs from the ISA scan only ({isa_sgpr}, a floor): the real "
                                "allocation may be larger.")
            elif sgpr_includes_implicit and isa_sgpr + arch.implicit_sgprs > sgpr:
                warnings.append(f"ISA uses s0..s{isa.max_sgpr_used} (+{arch.implicit_sgprs} implicit) "
                                f"but {source['sgpr']} says {sgpr} SGPRs: using the ISA count.")
                sgpr, sgpr_includes_implicit = isa_sgpr, False
                source["sgpr"] = ISA
            elif not sgpr_includes_implicit and isa_sgpr > sgpr:
                sgpr = isa_sgpr
                source["sgpr"] = ISA
    return Resources(vgpr, agpr, sgpr, lds, wg, sgpr_includes_implicit, source, tuple(warnings))


def _apply_isa_vgprs(arch: ArchTarget, isa: IsaRegisters, vgpr: int | None, agpr: int | None,
                     source: dict[str, str], warnings: list[str]) -> tuple[int | None, int | None]:
    if isa.max_vgpr_used is None and isa.max_agpr_used is None:
        return vgpr, agpr
    isa_v, isa_a = isa.vgpr_count, isa.agpr_count
    if vgpr is None:
        source["vgpr"] = source["agpr"] = ISA
        warnings.append(f"VGPRs from the ISA scan only (v{isa_v} a{isa_a} highest+1, a floor): the real "
                        "allocation may be larger.")
        return isa_v, isa_a
    claimed = _isa_total(arch, vgpr, agpr or 0)
    needed = _isa_total(arch, isa_v, isa_a)
    if needed <= claimed:
        return vgpr, agpr
    used = f"v0..v{isa.max_vgpr_used}" if isa.max_vgpr_used is not None else "no arch VGPRs"
    if isa.max_agpr_used is not None:
        used += f" and a0..a{isa.max_agpr_used}"
    hint = ""
    if arch.old_profilers_halve_vgprs and not agpr:
        hint = (f" (older rocprofv3 halves {arch.gfx} register counts and reports Accum 0; the allocation "
                f"is probably {2 * vgpr})")
    warnings.append(f"ISA uses {used} but {source['vgpr']} claims VGPR {vgpr} + AGPR {agpr or 0}: "
                    f"trusting the ISA{hint}.")
    source["vgpr"] = source["agpr"] = ISA
    return isa_v, isa_a
