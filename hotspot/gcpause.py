"""Pausing Python's cyclic garbage collector around allocation-heavy analysis."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector: parsing a capture allocates millions of lists and tuples (wave
    records, ~300k occupancy events), which trigger collections that scan them for cycles the
    analysis never creates (up to half its time). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    try:  # disabled inside the try: an exception raised in this thread right after (the MCP
        gc.disable()  # server cancels a call that way) still turns the collector back on
        yield
    finally:
        if was_enabled:
            gc.enable()
