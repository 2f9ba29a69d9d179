"""Regular expressions the user gives (`--kernel`, `--marker`), matched with a time bound.

Python's `re` backtracks: `(a+)+$` against a long kernel name (C++ templates run to kilobytes)
takes longer than the universe. `re` has no timeout, but its matching loop checks for signals, so
each search runs under a real-time interval timer (SIGALRM) that raises inside the match once the
pattern's budget is spent; the command then stops with a usage error naming the option (exit 2).
The budget is per pattern and per process (the sum of all its searches), so ten thousand names
cannot add up to a hang either. Outside the main thread (no signals there) a search runs unbounded;
hotspot matches user patterns only in the main thread.

A linear-time engine (RE2) would need a compiled dependency and drops syntax users write
(backreferences, lookaround); the bound keeps Python's syntax and costs ~2 µs per search.
"""

from __future__ import annotations

import re
import signal
import threading
import time

from hotspot.errors import UsageError

# Seconds of matching one pattern may take in all (a real pattern over a real trace: milliseconds).
MATCH_BUDGET_S = 2.0


class _Expired(Exception):
    pass


def _expire(_signum: int, _frame: object) -> None:
    raise _Expired


class UserRegex:
    """A compiled user pattern whose `search` is bounded (see the module docstring)."""

    __slots__ = ("pattern", "option", "_rx", "_spent")

    def __init__(self, pattern: str, option: str, hint: str = "") -> None:
        self.pattern, self.option = pattern, option
        try:
            self._rx = re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"{option} {pattern!r} is not a valid regular expression ({exc})",
                             hint or "quote the pattern, e.g. 'gemm.*', and escape special "
                             "characters") from None
        self._spent = 0.0

    def search(self, text: str) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return self._rx.search(text) is not None
        left = MATCH_BUDGET_S - self._spent
        if left <= 0:
            raise self._too_slow()
        previous = signal.signal(signal.SIGALRM, _expire)
        started = time.monotonic()
        try:
            signal.setitimer(signal.ITIMER_REAL, left)
            try:
                return self._rx.search(text) is not None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Expired:
            raise self._too_slow() from None
        finally:
            self._spent += time.monotonic() - started
            signal.signal(signal.SIGALRM, previous)

    def _too_slow(self) -> UsageError:
        return UsageError(f"{self.option} {self.pattern!r}: matching took more than "
                          f"{MATCH_BUDGET_S:g} s (a pattern that backtracks without end, such as "
                          "nested repeats '(a+)+')",
                          "simplify the pattern: a plain substring or 'prefix.*suffix' names a kernel")


def user_regex(pattern: str, option: str, hint: str = "") -> UserRegex:
    return UserRegex(pattern, option, hint)
