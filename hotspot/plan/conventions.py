"""The numbers and names several plan modules share, defined once (each with where it is specified).

Rule thresholds stay with their rule (docs/plan-rules.md names each beside its rule); hardware
numbers live in hotspot/arch (HARDWARE.md). What is here is neither: the units the plan writes in,
the evidence names one module writes and another reads, and how much the verdict shows.
"""

from __future__ import annotations

# Units (docs/schema/plan.md: "`*_pct` are percentages (0–100)"; estimates, shares and evidence
# `*_pct` values are percents rounded to two decimals).
PCT = 100.0           # a fraction (0-1) as a percent
ROUND_DIGITS = 2      # decimals of a percent in estimates and evidence
HZ_PER_MHZ = 1e6      # a product's clock (MHz, hotspot/arch/products.py) in Hz
BYTES_PER_GB = 1e9    # bandwidths in GB/s = 10^9 bytes/s, the unit of the products' peaks (products.py)
CYCLES_PER_NS_PER_MHZ = 1e-3  # at 1 MHz a clock ticks 1e-3 times per ns

# Evidence a roof verdict carries (docs/plan-rules.md "At the roof", docs/schema/plan.md): the
# engine marks the item, coverage reads the mark to let the verdict explain the rows it bounds.
AT_ROOF = "at_the_roof"

# The verdict: the first items and stall categories the text verdict shows and `--brief`'s JSON
# keeps (docs/schema/plan.md "Verdict": the first three plan items).
VERDICT_ITEMS = 3
VERDICT_CATEGORIES = 3
