"""SIGTERM and SIGHUP stop a command the way Ctrl-C does (layer 0: the CLI installs this before
it imports any command)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

# SIGTERM (kill, timeout, schedulers) and SIGHUP (a closed terminal) stop a command the way Ctrl-C
# does: as an exception, so children are stopped and records say "interrupted" before we exit.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


# The last SIGTERM/SIGHUP raised as Terminated: code that runs Python inside a C callback whose
# exceptions are discarded (SQLite's progress handler) rebuilds the interrupt from it.
LAST = {"signum": 0}


def _raise_terminated(signum: int, _frame: object) -> None:
    from hotspot.errors import Terminated

    LAST["signum"] = signum
    raise Terminated(signum)


def lost_interrupt() -> KeyboardInterrupt:
    """The interrupt a C callback swallowed: Terminated for the SIGTERM/SIGHUP last raised,
    else Ctrl-C (KeyboardInterrupt)."""
    from hotspot.errors import Terminated

    signum, LAST["signum"] = LAST["signum"], 0
    return Terminated(signum) if signum else KeyboardInterrupt()


@contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM/SIGHUP raise `Terminated` (a KeyboardInterrupt). A signal someone
    chose to ignore (nohup) or handle stays theirs; outside the main thread nothing changes."""
    previous: dict[signal.Signals, Any] = {}  # a handler as signal.signal gave it
    if threading.current_thread() is threading.main_thread():
        for sig in TERMINATING:
            if signal.getsignal(sig) == signal.SIG_DFL:
                previous[sig] = signal.signal(sig, _raise_terminated)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
