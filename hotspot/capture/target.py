"""Which gfx target a dispatch ran on, and which evidence decided it (an `Arch`, hotspot/arch/arch.py).

Each source states what it saw (an ArchHint) and hotspot/arch/decide.py weighs them: --arch; the
capture's own ISA (an instruction only one target has is proof: a side file naming another target
is overruled, with a warning naming it); agent_info CSV, rocpd results db, results.json and
code-object file names (`*_gfxNNN_code_object_id_*.out`) of this run, nearest first; those of
other runs only when nothing else decides. If none decides, the answer is "gfx9 (variant
unknown)" with a warning: never a confident wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from hotspot.arch.arch import UNKNOWN_LABEL, Arch, split_target_id  # noqa: F401 - UNKNOWN_LABEL re-exported
from hotspot.arch.classify import mnemonic_of
from hotspot.arch.decide import CODE_OBJECT, ISA, OVERRIDE, SIDE_FILE, ArchHint, decide
from hotspot.capture.sidefiles import AGENTS, nearby_files, side_files

CODE_OBJECT_RE = re.compile(r"_(gfx[0-9a-f]{3,4})_code_object_id_\d+\.out$", re.IGNORECASE)


def _decide(agents: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The one target the agents name (features may differ between agents), with a product."""
    bases = {(split_target_id(g) or (g, ()))[0] for g, _ in agents}
    if len(bases) != 1:
        return None
    name = sorted(g for g, _ in agents)[0]
    products = sorted({p for g, p in agents if p})
    return name, products[0] if products else ""


def detect_arch(dispatch_dir: Path, isa: Iterable[str] = (), override: str | None = None,
                meta: Sequence[Path] = (), kernel: str = "") -> Arch:
    """The capture's target from every piece of evidence, weighed by hotspot/arch/decide.py: the
    ISA's exclusive instructions first, then side files of this run, then those of other runs."""
    if override:
        return decide([ArchHint(override, "--arch", OVERRIDE)])
    hints, warnings = arch_hints(dispatch_dir, isa, meta, kernel)
    return decide(hints, warnings=warnings)


def _busy_cus_by_se(dispatch_dir: Path) -> dict[int, list[int]]:
    """The CUs occupancy.json shows busy on each traced shader engine ({} without a readable file)."""
    from hotspot.capture.occupancy_json import read_occupancy_json
    from hotspot.errors import HotspotError

    path = dispatch_dir / "occupancy.json"
    if not path.is_file():
        return {}
    try:
        trace = read_occupancy_json(path)
    except HotspotError:
        return {}  # the analysis reports an unreadable occupancy.json itself
    return {se: list(cols[1]) for se, cols in trace.columns_by_se.items()}


def arch_hints(dispatch_dir: Path, isa: Iterable[str] = (), meta: Sequence[Path] = (), kernel: str = ""
               ) -> tuple[list[ArchHint], list[str]]:
    """What each source says about the target (ArchHints, in the readers' order of trust), and
    warnings about sources that could not say."""
    from hotspot.arch.mfma import exclusive_target
    from hotspot.capture.sidefiles import same_run

    hints: list[ArchHint] = []
    warnings: list[str] = []
    isa = list(isa)
    for text in isa:
        gfx = exclusive_target(text)
        if gfx is not None:
            mnemonic = mnemonic_of(text)
            hints.append(ArchHint(gfx, f"ISA: {mnemonic} exists only on {gfx}", ISA))
            break
    explicit = {Path(m) for m in meta}
    for side in side_files(AGENTS):
        for path in nearby_files(dispatch_dir, side, meta=meta):
            agents = side.read(path)
            if not agents:
                continue
            this_run = path in explicit or same_run(dispatch_dir, path)
            if side.kind == "code object":  # the name says it: no product, no other agent
                hints.append(ArchHint(agents[0][0], f"code object name: {path}", CODE_OBJECT, None,
                                      this_run))
                continue
            decided = _decide(agents)
            if decided is None:
                warnings.append(f"{path}: several GPU architectures listed "
                                f"({', '.join(sorted({g for g, _ in agents}))}); not used")
                continue
            name, product = decided
            hints.append(ArchHint(name, f"{side.kind}: {path}", SIDE_FILE, product or None, this_run))
    if not any(h.kind == ISA for h in hints):
        from hotspot.capture.arch_evidence import capture_hint

        found = capture_hint(kernel, isa, _busy_cus_by_se(dispatch_dir))
        if found is not None:
            hints.append(found)
    return hints, warnings


def code_object_agents(path: Path) -> list[tuple[str, str]]:
    """The target a code object's file name carries (`*_gfxNNN_code_object_id_*.out`; not opened)."""
    m = CODE_OBJECT_RE.search(path.name)
    return [(m.group(1), "")] if m else []
