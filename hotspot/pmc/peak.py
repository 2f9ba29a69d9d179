"""Choose the peak fabric bandwidth: --peak-gbps > measured roofline.csv > sysinfo hbm_bw > product
table (hotspot/arch/products.py). Always says which one was used."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hotspot.pmc.model import PeakHint

SOURCE_USER = "--peak-gbps"


@dataclass(frozen=True)
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
    try:
        from hotspot.arch.products import find_product
    except ImportError:  # the product table is optional for this command
        return None
    candidates = [name]
    base = name.split("_")[0]          # sysinfo gpu_model "MI300X_A1" -> "MI300X"
    if base != name:
        candidates.append(base)
    for candidate in candidates:
        product = find_product(candidate)
        gbps = getattr(product, "peak_hbm_gbps", None) if product is not None else None
        if gbps:
            return Peak(float(gbps), f"product table: {product.name} peak HBM "  # type: ignore[union-attr]
                                     f"(theoretical)")
    return None
