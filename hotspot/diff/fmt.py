"""How diff writes a signed percentage and an interval in text (the verdict line and the views):
one rule, so a row reads the same wherever it is printed."""

from __future__ import annotations

from collections.abc import Sequence

MINUS = "\u2212"
# Most decimals a percentage is given to keep a nonzero value from reading as 0.
MAX_DIGITS = 2


def signed(value: float, digits: int) -> str:
    return f"{value:+.{digits}f}".replace("-", MINUS)


def readable(value: float, digits: int) -> str:
    """`value` signed to `digits` decimals, or to as many more (up to MAX_DIGITS) as it takes not
    to read as 0 when it is not: a change of −0.04% prints "−0.04", not "−0.0"; an interval end
    of +0.3 prints "+0.3", not "+0" (an interval that excludes 0 never shows an end at 0)."""
    if value:
        for more in range(digits, MAX_DIGITS + 1):
            if round(value, more) != 0:
                return signed(value, more)
        return signed(value, MAX_DIGITS)
    return signed(value, digits)


def change(value: float) -> str:
    """A per-wave change in percent: `−9.6%`."""
    return readable(value, 1) + "%"


def interval(ci: Sequence[float] | None) -> str:
    """`[−14, −5]` (whole percent, see `readable`); "" without one."""
    if ci is None:
        return ""
    return f"[{readable(ci[0], 0)}, {readable(ci[1], 0)}]"
