"""Which gfx target a dispatch ran on, and which evidence decided it (an `Arch`, hotspot/arch/arch.py).

Order of trust: --arch; agent_info CSV beside the dispatch; a rocpd results db; a results.json;
code-object file names (`*_gfxNNN_code_object_id_*.out`); gfx950-only mnemonics in the ISA. If none
decides, the answer is "gfx9 (variant unknown)" with a warning: never a confident wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from hotspot.arch.arch import (
    CDNA_CANDIDATES,
    UNKNOWN_LABEL,
    Arch,
    parse_arch,
    split_target_id,
)
from hotspot.capture.agents import (
    read_agents_csv,
    read_agents_results_json,
    read_agents_rocpd,
)
from hotspot.capture.sidefiles import nearby_files

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
                meta: Sequence[Path] = ()) -> Arch:
    if override:
        return parse_arch(override, "--arch")
    warnings: list[str] = []
    readers = (
        ("agent_info", ("*agent_info.csv", "*agent-info.csv"), read_agents_csv),
        ("rocpd", ("*results.db",), read_agents_rocpd),
        ("results.json", ("*results.json",), read_agents_results_json),
    )
    for label, patterns, read in readers:
        for path in nearby_files(dispatch_dir, *patterns, meta=meta):
            agents = read(path)
            if not agents:
                continue
            decided = _decide(agents)
            if decided is None:
                warnings.append(f"{path}: several GPU architectures listed "
                                f"({', '.join(sorted({g for g, _ in agents}))}); not used")
                continue
            name, product = decided
            return parse_arch(name, f"{label}: {path}", product or None, tuple(warnings))
    for path in nearby_files(dispatch_dir, "*_code_object_id_*.out", meta=meta):
        m = CODE_OBJECT_RE.search(path.name)
        if m:
            return parse_arch(m.group(1), f"code object name: {path}", warnings=tuple(warnings))
    from hotspot.arch.mfma import exclusive_target

    for text in isa:
        gfx = exclusive_target(text)
        if gfx is not None:
            mnemonic = text.split(None, 1)[0]
            return Arch(gfx, None, f"ISA: {mnemonic} exists only on {gfx} (last resort)",
                        warnings=tuple(warnings))
    warnings.append("architecture not determined: no agent_info CSV, rocpd db, results.json or "
                    "code object beside the dispatch, and no instruction only one target has; "
                    f"showing {UNKNOWN_LABEL} (pass --arch " + " or --arch ".join(CDNA_CANDIDATES) + ")")
    return Arch(None, None, "undetermined", CDNA_CANDIDATES, tuple(warnings))
