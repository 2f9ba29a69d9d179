"""Choose the peak fabric bandwidth: --peak-gbps > measured roofline.csv > sysinfo hbm_bw > product
table (hotspot/arch/products.py). Always says which one was used."""

from __future__ import annotations

from collections.abc import Iterable

from hotspot.capture import PeakHint
from hotspot.record import record

SOURCE_USER = "--peak-gbps"


@record
class Peak:
    gbps: float | None
    source: str


def choose_peak(user_gbps: float | None, hints: Iterable[PeakHint],
                product_names: Iterable[str]) -> Peak:
    if user_gbps is not None:
        return Peak(user_gbps, SOURCE_USER)
    ordered = list(hints)
    # Measured first: the roofline hints come before sysinfo in CounterFile.peak_hints.
    measured = [h for h in ordered if "roofline" in h.source]
    for hint in measured or ordered:
        return Peak(hint.gbps, hint.source)
    for name in product_names:
        found = _product_peak(name)
        if found is not None:
            return found
    return Peak(None, "unknown: no roofline.csv, sysinfo hbm_bw or known product; pass --peak-gbps")


def _product_peak(name: str) -> Peak | None:
    """Peak HBM from the product table; a family name counts only if its members agree."""
    try:
        from hotspot.arch.products import product_candidates
    except ImportError:  # the product table is optional for this command
        return None
    products = product_candidates(name)
    peaks = {p.peak_hbm_gbps for p in products}
    if len(peaks) != 1:
        return None
    names = "/".join(p.name for p in products)
    unverified = any("peak_hbm_gbps" in p.unverified for p in products)
    note = "theoretical, unverified" if unverified else "theoretical"
    return Peak(float(peaks.pop()), f"product table: {names} peak HBM ({note}; {name!r} in the input)")
