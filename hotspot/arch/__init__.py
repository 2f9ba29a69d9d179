"""Hardware model: per-gfx tables, products, MFMA rates, occupancy (theoretical and achieved).

Modules import only the standard library so they stay cheap to load from any command.
"""
