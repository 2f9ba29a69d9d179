"""Which gfx target a dispatch ran on, and which evidence decided it.

Order of trust: --arch; agent_info CSV beside the dispatch; a rocpd results db; a results.json;
code-object file names (`*_gfxNNN_code_object_id_*.out`); gfx950-only mnemonics in the ISA. If none
decides, the answer is "gfx9 (variant unknown)" with a warning: never a confident wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


from hotspot.capture.agents import read_agents_csv, read_agents_results_json, read_agents_rocpd
from hotspot.capture.sidefiles import nearby_files

CODE_OBJECT_RE = re.compile(r"_(gfx[0-9a-f]{3,4})_code_object_id_\d+\.out$", re.IGNORECASE)
GFX9_CDNA_CANDIDATES = ("gfx942", "gfx950")
UNKNOWN_LABEL = "gfx9 (variant unknown)"


@dataclass(frozen=True)
class ArchInfo:
    gfx: str | None  # None when undecided
    product: str | None
    source: str  # what decided, e.g. "agent_info: path/x_agent_info.csv"
    candidates: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        return self.gfx or UNKNOWN_LABEL


def _decide(agents: list[tuple[str, str]]) -> tuple[str, str] | None:
    gfxs = {g for g, _ in agents}
    if len(gfxs) != 1:
        return None
    gfx = gfxs.pop()
    products = sorted({p for g, p in agents if p})
    return gfx, products[0] if products else ""


def detect_arch(dispatch_dir: Path, isa: Iterable[str] = (), override: str | None = None) -> ArchInfo:
    if override:
        return ArchInfo(override.lower(), None, "--arch")
    warnings: list[str] = []
    readers = (
        ("agent_info", ("*agent_info.csv", "*agent-info.csv"), read_agents_csv),
        ("rocpd", ("*results.db",), read_agents_rocpd),
        ("results.json", ("*results.json",), read_agents_results_json),
    )
    for label, patterns, read in readers:
        for path in nearby_files(dispatch_dir, *patterns):
            agents = read(path)
            if not agents:
                continue
            decided = _decide(agents)
            if decided is None:
                warnings.append(f"{path}: several GPU architectures listed "
                                f"({', '.join(sorted({g for g, _ in agents}))}); not used")
                continue
            gfx, product = decided
            return ArchInfo(gfx, product or None, f"{label}: {path}", warnings=tuple(warnings))
    for path in nearby_files(dispatch_dir, "*_code_object_id_*.out"):
        m = CODE_OBJECT_RE.search(path.name)
        if m:
            return ArchInfo(m.group(1).lower(), None, f"code object name: {path}",
                            warnings=tuple(warnings))
    from hotspot.arch.mfma import is_gfx950_only

    for text in isa:
        if is_gfx950_only(text):
            mnemonic = text.split(None, 1)[0]
            return ArchInfo("gfx950", None, f"ISA: {mnemonic} exists only on gfx950 (last resort)",
                            warnings=tuple(warnings))
    warnings.append("architecture not determined: no agent_info CSV, rocpd db, results.json or "
                    "code object beside the dispatch, and no gfx950-only instruction; showing "
                    f"{UNKNOWN_LABEL} (pass --arch gfx942 or --arch gfx950)")
    return ArchInfo(None, None, "undetermined", GFX9_CDNA_CANDIDATES, tuple(warnings))
