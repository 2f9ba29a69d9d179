"""The wave-pass engine: one streaming pass over the wave files (wavepass.py), waves grouped by
executed sequence and folded by column (groups.py), and the optional C scanner (native.py +
_wavescan.c) with its pure-Python twin."""
