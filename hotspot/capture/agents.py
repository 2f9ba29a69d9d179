"""GPU agents (gfx name, product name) listed in the files rocprofv3 writes beside a capture:
`*agent_info.csv`, the rocpd results db, `*results.json`. Each reader returns [] for a file that is
not what its name says, so that another source can decide."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from hotspot.capture.files import CSV_FIELD_LIMIT, open_text, read_capped
from hotspot.errors import InputError

# A gfx target name, possibly with target features (gfx942:sramecc+:xnack-).
GFX_RE = re.compile(r"^gfx[0-9a-f]{3,4}(?::[a-z0-9_.-]+[+-]?)*$", re.IGNORECASE)
# results.json can be large; agents sit near the top, but we do not parse more than this.
RESULTS_JSON_MAX_BYTES = 256 * 1024 * 1024


def read_agents_csv(path: Path) -> list[tuple[str, str]]:
    """(gfx name, product name) of the GPU agents of a rocprofv3 agent_info CSV, in file order (the
    one reader of that file: the arch of a capture, and of counter files in `pmc`)."""
    import csv  # only when an agent_info CSV is beside the capture

    try:
        with open_text(path, confine=False) as fh:  # FIFOs and devices refused, not read
            csv.field_size_limit(CSV_FIELD_LIMIT)
            reader = csv.DictReader(fh)
            fields = {(f or "").lower(): f for f in reader.fieldnames or []}
            name_col, type_col = fields.get("name"), fields.get("agent_type")
            prod_cols = [fields[c] for c in ("product_name", "marketing_name") if c in fields]
            if not name_col:
                return []
            out = []
            for row in reader:
                if type_col and (row.get(type_col) or "").upper() != "GPU":
                    continue
                name = (row.get(name_col) or "").strip()
                if GFX_RE.match(name):
                    products = [(row.get(c) or "").strip() for c in prod_cols]
                    out.append((name, next((p for p in products if p), "")))
            return out
    except (OSError, csv.Error, InputError):
        return []


def read_agents_rocpd(path: Path) -> list[tuple[str, str]]:
    import sqlite3  # only when a rocpd database is beside the dispatch

    from hotspot.capture.trace.rocpd import read_rocpd_agents
    from hotspot.errors import HotspotError

    try:
        agents = read_rocpd_agents(path)  # bounded (capture/trace/_sqlite.py): never a hang
    except (HotspotError, sqlite3.Error):
        return []  # not a rocpd db (or unreadable): another source decides
    return [(a["name"], str(a.get("product_name") or "")) for a in agents
            if str(a.get("type", "")).upper() == "GPU" and isinstance(a.get("name"), str)
            and GFX_RE.match(a["name"])]


def read_agents_results_json(path: Path) -> list[tuple[str, str]]:
    try:
        doc = orjson.loads(read_capped(path, RESULTS_JSON_MAX_BYTES, confine=False))
    except (InputError, orjson.JSONDecodeError):
        return []  # over the cap, unreadable or not JSON: another source decides
    out = []
    tools = doc.get("rocprofiler-sdk-tool") if isinstance(doc, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        for agent in tool.get("agents", []) if isinstance(tool, dict) else []:
            name = agent.get("name") if isinstance(agent, dict) else None
            if isinstance(name, str) and GFX_RE.match(name):
                out.append((name, str(agent.get("product_name") or "")))
    return out
