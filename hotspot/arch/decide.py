"""The one decision of which gfx target a capture or a counter file comes from: `decide(hints)`.

Every reader states what it saw as an `ArchHint` (a name, where it came from, and what kind of
evidence it is); `decide` weighs them, so capture (hotspot/capture/target.py) and pmc
(hotspot/pmc/api.py) cannot disagree on the rules:

1. `--arch` decides outright.
2. The capture's own ISA: an instruction that exists on one target only (an MFMA shape only
   gfx950 has) is proof, not a hint. A side file naming another target is overruled, and the
   warning names it (an agent_info.csv two folders up may describe another run on another GPU).
3. Side files and code-object names, in the order given (the reader's order of trust: agent_info,
   rocpd, results.json, code-object names; nearest folder first). A file from another run
   (`same_run` False) is used only when nothing from this run decides, never against the ISA.
4. What the capture proves without side files (a kernel-name ISA tag; gfx940+ instructions with a
   traced layout that rules the other target out: hotspot/capture/arch_evidence.py), before side
   files of another run.
5. Counter-name guesses (pmc): the last resort.

Hints of one rank that disagree: the first one decides and the others are named in a warning
(`on_conflict="warn"`, the capture's rule), or the decision is refused (`"refuse"`, pmc's rule:
counter files of two GPUs summed together are wrong numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

from hotspot.arch.arch import CDNA_CANDIDATES, UNKNOWN_LABEL, Arch, parse_arch, split_target_id
from hotspot.errors import InputError
from hotspot.record import record

OVERRIDE = "override"
ISA = "isa"
SIDE_FILE = "side-file"
CODE_OBJECT = "code-object"
COUNTERS = "counters"
# What the capture itself proves without side files (hotspot/capture/arch_evidence.py): a kernel-name
# ISA tag, or gfx940+ instructions with a traced layout that leaves one target. Below this run's side
# files, above another run's.
CAPTURE = "capture"


@record
class ArchHint:
    name: str                 # as written: "gfx942", "gfx942:sramecc+", a product-only name
    source: str               # what and where, e.g. "agent_info: run/x_agent_info.csv"
    kind: str = SIDE_FILE     # OVERRIDE, ISA, SIDE_FILE, CODE_OBJECT or COUNTERS
    product: str | None = None
    same_run: bool = True     # a side file from this capture's own run folder


def base(name: str) -> str:
    """`gfx942` for `gfx942:sramecc+`; the name lowered when it is not a gfx target."""
    parsed = split_target_id(name)
    return parsed[0] if parsed else name.strip().lower()


def _rank(h: ArchHint) -> int:
    if h.kind == OVERRIDE:
        return 0
    if h.kind == ISA:
        return 1
    if h.kind in (SIDE_FILE, CODE_OBJECT) and h.same_run:
        return 2
    if h.kind == CAPTURE:
        return 3
    if h.kind in (SIDE_FILE, CODE_OBJECT):
        return 4
    return 5


def decide(hints: Sequence[ArchHint], on_conflict: str = "warn",
           warnings: Sequence[str] = ()) -> Arch:
    """The target the evidence supports (see the module docstring); undetermined, with the CDNA
    candidates and a warning, when nothing decides."""
    notes = list(warnings)
    ordered = sorted(enumerate(hints), key=lambda ih: (_rank(ih[1]), ih[0]))
    hints = [h for _, h in ordered]
    if not hints:
        notes.append("architecture not determined: no agent_info CSV, rocpd db, results.json or code "
                     "object beside the dispatch, and no instruction only one target has; showing "
                     f"{UNKNOWN_LABEL} (pass --arch " + " or --arch ".join(CDNA_CANDIDATES) + ")")
        return Arch(None, None, "undetermined", CDNA_CANDIDATES, tuple(notes))
    first = hints[0]
    if first.kind == OVERRIDE:
        return parse_arch(first.name, first.source, first.product, tuple(notes))
    chosen = base(first.name)
    same_rank = [h for h in hints if _rank(h) == _rank(first)]
    others = sorted({base(h.name) for h in same_rank} - {chosen})
    if others:
        detail = "; ".join(f"{h.name} from {h.source}" for h in same_rank)
        if on_conflict == "refuse":
            raise InputError(f"the inputs disagree on the GPU arch ({detail})",
                             "analyze one GPU's files at a time, or pass --arch", code="bad-input")
        notes.append(f"the evidence disagrees on the GPU arch ({detail}); using {first.name} "
                     f"({first.source})")
    overruled = [h for h in hints if _rank(h) > _rank(first) and base(h.name) != chosen
                 and h.kind != COUNTERS]
    for h in overruled:
        notes.append(f"{h.source} names {h.name}, but {first.source}: that file describes another "
                     f"GPU or run and is not used")
    # the product and the target features come from the best hint that names the chosen target
    # (the ISA names no product; an agreeing agent_info row does)
    agreeing = [h for h in hints if base(h.name) == chosen and h.kind != COUNTERS]
    product = next((h.product for h in agreeing if h.product), None)
    written = next((h.name for h in agreeing if (split := split_target_id(h.name)) and split[1]),
                   first.name)
    source = first.source
    if first.kind == ISA:
        support = next((h for h in agreeing if h.kind != ISA), None)
        if support is not None:
            source = support.source  # the side file, confirmed by the ISA: as before
    arch = parse_arch(written, source, product, tuple(notes))
    return arch
