"""AMD Instinct products (HARDWARE.md §5): arch, CUs, clocks, HBM bandwidth, L2, peak MFMA rates.

Units are in the field names: MHz, GB/s (10^9 bytes/s), TFLOP/s (10^12). Values the reference marks
"(unverified)" keep that mark in their source note and are listed in `Product.unverified`.
Prefer measured peaks (roofline.csv, sysinfo) over these when present; say which was used.
"""

from __future__ import annotations

import re
from hotspot.record import record

_S5 = "HARDWARE.md §5"
_UNVERIFIED = "(unverified)"


@record
class Product:
    name: str                         # marketing name without "AMD Instinct", e.g. "MI300X"
    gfx: str
    cus: int
    xcds: int                         # XCDs (MI300/MI350) or GCDs (MI200); 1 for monolithic
    peak_engine_clock_mhz: int
    peak_hbm_gbps: float              # GB/s = 10^9 bytes/s
    l2: str
    infinity_cache_mib: int | None
    dense_f16_tflops: float           # dense FP16/BF16 MFMA, TFLOP/s
    dense_fp8_tflops: float | None
    sources: tuple[tuple[str, str], ...]   # (field, one-line note)
    unverified: tuple[str, ...] = ()       # fields the reference could not confirm
    # Active CUs per shader engine (the CUs an occupancy.json of one SE can show busy). An average
    # where the SEs of a die differ (MI300: 38 CUs per XCD over 4 SEs = 9 or 10 each, 9.5 here);
    # None where the SE structure is not documented.
    cus_per_se: float | None = None

    def source(self, field_name: str) -> str:
        return dict(self.sources).get(field_name, _S5)


def _product(name: str, gfx: str, cus: int, xcds: int, clock: int, hbm_gbps: float, l2: str,
             mall: int | None, f16: float, fp8: float | None, *, unverified: tuple[str, ...] = (),
             notes: dict[str, str] | None = None, cus_per_se: float | None = None) -> Product:
    sources = {f: _S5 for f in ("gfx", "cus", "xcds", "peak_engine_clock_mhz", "peak_hbm_gbps", "l2",
                                "infinity_cache_mib", "dense_f16_tflops", "dense_fp8_tflops")}
    sources.update(notes or {})
    for field_name in unverified:
        sources[field_name] = f"{sources[field_name]} {_UNVERIFIED}"
    if cus_per_se is not None:
        sources.setdefault("cus_per_se", _SE_SOURCE)
    return Product(name, gfx, cus, xcds, clock, hbm_gbps, l2, mall, f16, fp8,
                   tuple(sorted(sources.items())), unverified, cus_per_se)


# Shader engines per XCD and CUs per XCD: AMD CDNA 3 and CDNA 4 architecture whitepapers (XCD
# structure: 4 shader engines per XCD; MI300X/MI325X/MI300A 38 active CUs per XCD, MI350X/MI355X 32).
SES_PER_XCD = 4
_SE_SOURCE = ("AMD CDNA 3 / CDNA 4 architecture whitepapers: CUs per XCD ÷ 4 shader engines per XCD "
              "(an average where 38 CUs per XCD split 9/10)")
CDNA3_CUS_PER_XCD = 38
CDNA4_CUS_PER_XCD = 32


PRODUCTS: dict[str, Product] = {p.name: p for p in (
    _product("MI300X", "gfx942", 304, 8, 2100, 5300.0,
             "4 MiB per XCD, 16 channels per XCD, 128 B line", 256, 1307.4, 2614.9,
             cus_per_se=CDNA3_CUS_PER_XCD / SES_PER_XCD),
    _product("MI325X", "gfx942", 304, 8, 2100, 6000.0,
             "4 MiB per XCD, 16 channels per XCD, 128 B line", 256, 1307.4, 2614.9,
             unverified=("peak_engine_clock_mhz", "peak_hbm_gbps"),
             cus_per_se=CDNA3_CUS_PER_XCD / SES_PER_XCD),
    _product("MI300A", "gfx942", 228, 6, 2100, 5300.0, "24 MiB total", 256, 980.6, 1961.2,
             cus_per_se=CDNA3_CUS_PER_XCD / SES_PER_XCD),
    _product("MI350X", "gfx950", 256, 8, 2200, 8000.0, "4 MiB per XCD, 16 channels per XCD", 256,
             2306.9, 4613.7, unverified=("peak_engine_clock_mhz", "peak_hbm_gbps"),
             cus_per_se=CDNA4_CUS_PER_XCD / SES_PER_XCD),
    _product("MI355X", "gfx950", 256, 8, 2400, 8000.0, "4 MiB per XCD, 16 channels per XCD", 256,
             2516.6, 5033.2, unverified=("peak_engine_clock_mhz", "peak_hbm_gbps"),
             cus_per_se=CDNA4_CUS_PER_XCD / SES_PER_XCD),
    _product("MI250X", "gfx90a", 220, 2, 1700, 3276.8, "8 MiB per GCD, 32 channels", None, 383.0, None,
             notes={"xcds": f"{_S5}: 2 GCDs",
                    "peak_hbm_gbps": f"{_S5} 3.28 TB/s (= 8192-bit HBM2e × 3.2 Gb/s = 3276.8 GB/s)"}),
    _product("MI210", "gfx90a", 104, 1, 1700, 1638.4, "8 MiB, 32 channels", None, 181.0, None,
             unverified=("peak_hbm_gbps", "l2"),
             notes={"gfx": "AMD MI210 spec sheet (CDNA2, one GCD)",
                    "cus": "AMD MI210 spec sheet: 104 CUs",
                    "xcds": "AMD MI210 spec sheet: one GCD",
                    "peak_engine_clock_mhz": "AMD MI210 spec sheet: 1700 MHz peak engine clock",
                    "peak_hbm_gbps": "AMD MI210 spec sheet 1.6 TB/s; 1638.4 = 4096-bit HBM2e × 3.2 Gb/s, "
                                     "matches rocprof-compute MI200 sysinfo hbm_bw",
                    "l2": "one MI250X GCD's L2 (8 MiB, 32 ch); matches rocprof-compute total_l2_chan 32",
                    "infinity_cache_mib": "CDNA2 has no Infinity Cache",
                    "dense_f16_tflops": "AMD MI210 spec sheet 181.0 = 104 CUs × 1024 FLOP/clk × 1.7 GHz",
                    "dense_fp8_tflops": "CDNA2 has no FP8 MFMA"}),
    _product("MI100", "gfx908", 120, 1, 1502, 1228.8, "8 MiB, 64 B line", None, 184.6, None,
             notes={"peak_hbm_gbps": f"{_S5} 1.23 TB/s (= 4096-bit HBM2 × 2.4 Gb/s = 1228.8 GB/s)"}),
)}

# Family names tools report without the variant (rocprof-compute sysinfo `gpu_model`): ambiguous.
FAMILIES: dict[str, tuple[str, ...]] = {
    "MI200": ("MI250X", "MI210"),
    "MI250": ("MI250X",),
    "MI300": ("MI300X", "MI300A", "MI325X"),
    "MI350": ("MI350X", "MI355X"),
}

_NOISE = re.compile(r"\b(?:amd|instinct)\b", re.IGNORECASE)


def _matches(text: str, name: str) -> bool:
    # Name at a token boundary: "MI300X_A1" and "AMD Instinct MI300X" match MI300X; "MI3000" does not.
    return re.search(rf"(?<![A-Z0-9]){re.escape(name)}(?![A-Z0-9])", text) is not None


def find_product(name: str) -> Product | None:
    """The product named by agent_info `Product_Name`, sysinfo `gpu_model` or a bare name.

    Longest matching product name wins; a bare family name ("MI300") is ambiguous and gives None
    (see `product_candidates`).
    """
    text = _NOISE.sub(" ", name).upper()
    hits = [p for key, p in PRODUCTS.items() if _matches(text, key)]
    if not hits:
        return None
    return max(hits, key=lambda p: (len(p.name), p.name))


def product_candidates(name: str) -> tuple[Product, ...]:
    """Every product a name may mean: the exact product, or all members of a family name."""
    exact = find_product(name)
    if exact is not None:
        return (exact,)
    text = _NOISE.sub(" ", name).upper()
    for family in sorted(FAMILIES, key=len, reverse=True):
        if _matches(text, family):
            return tuple(PRODUCTS[n] for n in FAMILIES[family])
    return ()
