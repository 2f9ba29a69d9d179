"""A quantity that is exact or only known as a [low, high] range (never a guessed single number)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from hotspot.record import record


@record
class Estimate:
    value: float | None          # set only when exact
    low: float | None            # None: not computable at all
    high: float | None
    exact: bool
    missing: tuple[str, ...] = ()    # counters whose collection would make it exact
    reason: str = ""                 # why it is a range or unknown ("" when exact)

    @staticmethod
    def of(value: float) -> Estimate:
        return Estimate(value, value, value, True)

    @staticmethod
    def between(low: float, high: float, missing: Iterable[str] = (), reason: str = "") -> Estimate:
        if low == high and not reason:
            return Estimate.of(low)
        return Estimate(None, low, high, False, tuple(missing), reason)

    @staticmethod
    def unknown(missing: Iterable[str] = (), reason: str = "") -> Estimate:
        return Estimate(None, None, None, False, tuple(missing), reason)

    @property
    def known(self) -> bool:
        return self.low is not None and self.high is not None

    def map(self, fn: Callable[[float], float]) -> Estimate:
        """Apply a monotonically increasing function to both ends."""
        low, high = self.low, self.high
        if low is None or high is None:  # not known
            return self
        if self.exact:
            return Estimate.of(fn(low))
        return Estimate(None, fn(low), fn(high), False, self.missing, self.reason)

    def holds(self, test: Callable[[float], bool]) -> bool | None:
        """True/False when `test` gives the same answer over the whole range, None when it splits."""
        low, high = self.low, self.high
        if low is None or high is None:  # not known
            return None
        at_low, at_high = test(low), test(high)
        return at_low if at_low == at_high else None


def total(estimates: Iterable[Estimate]) -> Estimate:
    items = list(estimates)
    if not items:
        return Estimate.unknown(reason="no dispatches")
    missing = tuple(dict.fromkeys(m for e in items for m in e.missing))
    reasons = "; ".join(dict.fromkeys(e.reason for e in items if e.reason))
    if not all(e.known for e in items):
        return Estimate.unknown(missing, reasons or "not computable for some dispatches")
    low = sum(e.low for e in items if e.low is not None)  # all: every one is known
    high = sum(e.high for e in items if e.high is not None)
    if all(e.exact for e in items):
        return Estimate.of(low)
    return Estimate(None, low, high, False, missing, reasons)


def median(estimates: Iterable[Estimate]) -> Estimate:
    """Median of each end (exact when every item is exact)."""
    items = [e for e in estimates if e.known]
    if not items:
        return Estimate.unknown(reason="not computable")
    low = statistics.median(e.low for e in items if e.low is not None)  # all: known ones
    high = statistics.median(e.high for e in items if e.high is not None)
    if all(e.exact for e in items):
        return Estimate.of(low)
    missing = tuple(dict.fromkeys(m for e in items for m in e.missing))
    reasons = "; ".join(dict.fromkeys(e.reason for e in items if e.reason))
    return Estimate(None, low, high, False, missing, reasons)
