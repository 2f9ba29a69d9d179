"""Which gfx target a dispatch ran on, and which evidence decided it.

Order of trust: --arch; agent_info CSV beside the dispatch; a rocpd results db; a results.json;
code-object file names (`*_gfxNNN_code_object_id_*.out`); gfx950-only mnemonics in the ISA. If none
decides, the answer is "gfx9 (variant unknown)" with a warning: never a confident wrong answer.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from hotspot.att.nearby import nearby_files

GFX_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")
CODE_OBJECT_RE = re.compile(r"_(gfx[0-9a-f]{3,4})_code_object_id_\d+\.out$", re.IGNORECASE)
GFX9_CDNA_CANDIDATES = ("gfx942", "gfx950")
UNKNOWN_LABEL = "gfx9 (variant unknown)"
# results.json can be large; agents sit near the top, but we do not parse more than this.
RESULTS_JSON_MAX_BYTES = 256 * 1024 * 1024


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


def _gpu_agents_from_csv(path: Path) -> list[tuple[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as fh:
            reader = csv.DictReader(fh)
            fields = {(f or "").lower(): f for f in reader.fieldnames or []}
            name_col, type_col = fields.get("name"), fields.get("agent_type")
            prod_col = fields.get("product_name")
            if not name_col:
                return []
            out = []
            for row in reader:
                if type_col and (row.get(type_col) or "").upper() != "GPU":
                    continue
                name = (row.get(name_col) or "").strip()
                if GFX_RE.match(name):
                    out.append((name, (row.get(prod_col) or "").strip() if prod_col else ""))
            return out
    except (OSError, csv.Error):
        return []


def _gpu_agents_from_rocpd(path: Path) -> list[tuple[str, str]]:
    import sqlite3  # only when a rocpd database is beside the dispatch

    from hotspot.errors import HotspotError
    from hotspot.trace.rocpd import read_rocpd_agents

    try:
        agents = read_rocpd_agents(path)
    except (HotspotError, sqlite3.Error):
        return []  # not a rocpd db (or unreadable): another source decides
    return [(a["name"], str(a.get("product_name") or "")) for a in agents
            if str(a.get("type", "")).upper() == "GPU" and isinstance(a.get("name"), str)
            and GFX_RE.match(a["name"])]


def _gpu_agents_from_results_json(path: Path) -> list[tuple[str, str]]:
    try:
        if path.stat().st_size > RESULTS_JSON_MAX_BYTES:
            return []
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    out = []
    tools = doc.get("rocprofiler-sdk-tool") if isinstance(doc, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        for agent in tool.get("agents", []) if isinstance(tool, dict) else []:
            name = agent.get("name") if isinstance(agent, dict) else None
            if isinstance(name, str) and GFX_RE.match(name):
                out.append((name, str(agent.get("product_name") or "")))
    return out


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
        ("agent_info", ("*agent_info.csv", "*agent-info.csv"), _gpu_agents_from_csv),
        ("rocpd", ("*results.db",), _gpu_agents_from_rocpd),
        ("results.json", ("*results.json",), _gpu_agents_from_results_json),
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
