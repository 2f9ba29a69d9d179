"""Side files that give the arch and the bandwidth peak: rocprof-compute `sysinfo.csv` and
`roofline.csv`, rocprofv3 `*agent_info.csv`. All optional: a missing or odd file yields no hint
(with a note), never an error, because the counters themselves are still usable.
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

from hotspot.capture.agents import read_agents_csv
from hotspot.capture.counters.model import ArchHint, PeakHint
from hotspot.capture.files import CSV_FIELD_LIMIT, open_text
from hotspot.errors import HotspotError


def _dict_rows(path: Path) -> list[dict[str, str]]:
    try:
        with open_text(path, confine=False) as fh:  # FIFOs and devices refused, not read
            csv.field_size_limit(CSV_FIELD_LIMIT)
            reader = csv.reader(fh)
            header = next(reader, None) or []
            keys = [h.strip().lstrip("\ufeff").lower() for h in header]
            return [{k: (row[i].strip() if i < len(row) else "") for i, k in enumerate(keys)}
                    for row in reader if row]
    except (OSError, csv.Error, HotspotError):
        return []


def _float(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value > 0 else None


def read_sysinfo(path: Path) -> tuple[list[ArchHint], list[PeakHint], list[str]]:
    """(arch hints, peak hints, product names) from a rocprof-compute sysinfo.csv."""
    rows = _dict_rows(path)
    if not rows:
        return [], [], []
    row = rows[0]
    model = row.get("gpu_model") or None
    arch = row.get("gpu_arch", "")
    arches = [ArchHint(arch, f"{path} gpu_arch", model)] if arch.startswith("gfx") else []
    # hbm_bw is the theoretical peak rocprof-compute computed for the part, in GB/s.
    hbm = _float(row.get("hbm_bw"))
    peaks = [PeakHint(hbm, f"{path.name} hbm_bw (theoretical, as recorded by rocprof-compute)")] \
        if hbm else []
    products = [n for n in (model, row.get("gpu_series")) if n]
    return arches, peaks, products


def read_roofline(path: Path) -> list[PeakHint]:
    """The measured HBM bandwidth (GB/s) from roofline.csv: median over the devices measured."""
    values = [v for v in (_float(r.get("hbmbw")) for r in _dict_rows(path)) if v]
    if not values:
        return []
    devices = f"{len(values)} device{'s' if len(values) != 1 else ''}"
    return [PeakHint(statistics.median(values),
                     f"{path.name} HBMBw (measured by rocprof-compute roofline, median of {devices})")]


def read_agent_info(path: Path) -> tuple[list[ArchHint], list[str]]:
    """GPU agents of a rocprofv3 agent_info.csv (capture/agents.py reads it): the most reliable
    arch source (FORMATS.md §3)."""
    hints: dict[str, ArchHint] = {}
    products: list[str] = []
    for name, product in read_agents_csv(path):
        hints.setdefault(name, ArchHint(name, f"{path} Name", product or None))
        if product and product not in products:
            products.append(product)
    return sorted(hints.values(), key=lambda h: h.arch), products
