"""Counter semantics per architecture: which counters give L2 hits/misses and L2→fabric bytes.

Facts about what each hardware counter counts, one set per counter generation with its source; the
CDNA entries of hotspot/arch/targets.py point at them (`ArchTarget.counters`). Formulas:
../shared/docs/HARDWARE.md §6.

The read-byte model: every L2→fabric read request has one size class (32, 64 or 128 bytes). An arch
lists its classes, the counter that counts each class (None when no counter exists and the class is
derived as the remainder), and the counter of all read requests. Bytes are exact when at most one
class is unknown and the total is present; otherwise they are a [low, high] range.
"""

from __future__ import annotations

from hotspot.record import record



@record
class SizeClass:
    bytes_per_request: int
    counter: str | None  # None: no counter; derived as total minus the other classes


@record
class ArchCounters:
    family: str                       # the table key, e.g. "gfx942"
    hit: str
    miss: str
    read_requests: str | None         # all L2→fabric read requests (None: no byte formula)
    size_classes: tuple[SizeClass, ...]
    formula: str                      # the byte formula as written in HARDWARE.md §6
    dram: SizeClass | None = None     # DRAM-only read requests of one size (gfx950)
    source: str = ""
    # `collect --pmc-preset l2`: the counters the byte formula needs, in collection order (only
    # names the hardware has: an unknown counter name makes a whole rocprofv3 job fail).
    l2_preset: tuple[str, ...] = ()

    @property
    def byte_counters(self) -> tuple[str, ...]:
        names = [self.read_requests] if self.read_requests else []
        names += [c.counter for c in self.size_classes if c.counter]
        return tuple(names)

    @property
    def counters(self) -> tuple[str, ...]:
        """Every counter this arch's metrics use, in display order."""
        names = [self.hit, self.miss, *self.byte_counters]
        if self.dram and self.dram.counter:
            names.append(self.dram.counter)
        return tuple(names)

    @property
    def req_32b(self) -> str | None:
        return next((c.counter for c in self.size_classes if c.bytes_per_request == 32), None)


_CDNA_L2_SOURCE = "TCC = the CDNA L2; TCC_HIT/TCC_MISS summed over channels (HARDWARE.md §6)"

GFX90A_COUNTERS = ArchCounters(
    family="gfx90a", hit="TCC_HIT_sum", miss="TCC_MISS_sum",
    read_requests="TCC_EA_RDREQ_sum",
    size_classes=(SizeClass(32, "TCC_EA_RDREQ_32B_sum"), SizeClass(64, None)),
    formula="32·TCC_EA_RDREQ_32B_sum + 64·(TCC_EA_RDREQ_sum − TCC_EA_RDREQ_32B_sum)",
    source="HARDWARE.md §6: MI100/MI200 name the EA counters TCC_EA_*; 64 B request semantics "
           "as in rocprof-compute's MI200 configs (no 128 B request counter)",
    l2_preset=("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum"),
)
GFX942_COUNTERS = ArchCounters(
    family="gfx942", hit="TCC_HIT_sum", miss="TCC_MISS_sum",
    read_requests="TCC_EA0_RDREQ_sum",
    size_classes=(SizeClass(32, "TCC_EA0_RDREQ_32B_sum"), SizeClass(64, None),
                  SizeClass(128, "TCC_BUBBLE_sum")),
    formula="128·TCC_BUBBLE_sum + 64·(TCC_EA0_RDREQ_sum − TCC_BUBBLE_sum − TCC_EA0_RDREQ_32B_sum)"
            " + 32·TCC_EA0_RDREQ_32B_sum",
    source="HARDWARE.md §6: TCC_EA0_RDREQ_sum is already summed over all TCC channels; "
           "TCC_BUBBLE counts 128 B read requests on gfx942",
    l2_preset=("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum",
               "TCC_BUBBLE_sum"),
)
GFX950_COUNTERS = ArchCounters(
    family="gfx950", hit="TCC_HIT_sum", miss="TCC_MISS_sum",
    read_requests="TCC_EA0_RDREQ_sum",
    size_classes=(SizeClass(32, "TCC_EA0_RDREQ_32B_sum"), SizeClass(64, "TCC_EA0_RDREQ_64B_sum"),
                  SizeClass(128, "TCC_EA0_RDREQ_128B_sum")),
    formula="32·TCC_EA0_RDREQ_32B_sum + 64·TCC_EA0_RDREQ_64B_sum + 128·TCC_EA0_RDREQ_128B_sum",
    dram=SizeClass(32, "TCC_EA0_RDREQ_DRAM_32B_sum"),
    source="HARDWARE.md §6: gfx950 counts 32/64/128 B read requests separately; DRAM-only bytes = "
           "32·TCC_EA0_RDREQ_DRAM_32B_sum",
    # TCC_EA0_RDREQ_DRAM_32B_sum is left out of the preset: HARDWARE.md marks it "if present".
    l2_preset=("TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum",
               "TCC_EA0_RDREQ_64B_sum", "TCC_EA0_RDREQ_128B_sum"),
)
RDNA_COUNTERS = ArchCounters(
    family="rdna", hit="GL2C_HIT_sum", miss="GL2C_MISS_sum",
    read_requests=None, size_classes=(), formula="",
    source="RDNA (gfx10/11/12) L2 is GL2C; rocprofv3 derives GL2C_HIT_sum/GL2C_MISS_sum. "
           "hotspot has no fabric-byte formula for RDNA",
)

# Targets outside the CDNA table (hotspot/arch/targets.py) whose counters are still known:
# early MI300 steppings and the RDNA parts (LLVM AMDGPU processor list).
OTHER_TARGETS: dict[str, ArchCounters] = {
    "gfx940": GFX942_COUNTERS, "gfx941": GFX942_COUNTERS,
    **{gfx: RDNA_COUNTERS for gfx in ("gfx1030", "gfx1031", "gfx1032", "gfx1100", "gfx1101", "gfx1102",
                                     "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201")},
}

ALL_SETS: tuple[ArchCounters, ...] = (GFX90A_COUNTERS, GFX942_COUNTERS, GFX950_COUNTERS, RDNA_COUNTERS)


def wanted_counters() -> tuple[str, ...]:
    """Every `_sum` counter any arch needs: readers keep only these (the files can be very wide)."""
    seen: dict[str, None] = {}
    for spec in ALL_SETS:
        for name in spec.counters:
            seen[name] = None
    return tuple(seen)


@record
class ArchGuess:
    arch: str | None               # decided arch, or None
    candidates: tuple[str, ...]    # arches the evidence allows (several = undecided)
    reason: str


def guess_arch_from_counters(names: set[str]) -> ArchGuess:
    """Infer the arch family from the counter names a file holds (weakest arch source)."""
    upper = {n.upper() for n in names}

    def has(prefix: str) -> bool:
        return any(n.startswith(prefix) for n in upper)

    if has("TCC_EA0_RDREQ_64B") or has("TCC_EA0_RDREQ_128B"):
        return ArchGuess("gfx950", ("gfx950",), "TCC_EA0_RDREQ_64B/128B counters exist only on gfx950")
    if has("TCC_EA_RDREQ"):
        return ArchGuess("gfx90a", ("gfx908", "gfx90a"),
                         "TCC_EA_RDREQ (no channel digit) is the MI100/MI200 naming; both use the "
                         "same byte formula")
    if has("TCC_EA0_RDREQ"):
        return ArchGuess(None, ("gfx942", "gfx950"),
                         "TCC_EA0_RDREQ names are shared by gfx942 and gfx950")
    if has("GL2C_"):
        return ArchGuess(None, (), "GL2C counters: an RDNA part, exact target unknown")
    return ArchGuess(None, (), "no L2/fabric counter names to infer the arch from")
