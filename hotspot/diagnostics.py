"""Diagnostic lines on stderr (stdout holds only data). Any layer may call these."""

from __future__ import annotations

import os
import re
import sys
from contextvars import ContextVar

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# C0 controls but tab and newline, DEL and C1 controls: from kernel names, source lines or paths
# they would drive the terminal (ESC sequences, carriage returns), so text shows them escaped.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str, newlines: bool = True) -> str:
    """`text` with control characters shown as `\\xNN` (ESC as `\\x1b`): the one escape for
    everything hotspot prints as text or markdown, on stdout and stderr. `newlines=False` escapes
    newlines too (a table cell). JSON output is never passed through this: it keeps exact strings."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# The characters hotspot's text views use beyond ASCII, each replaced by ONE ASCII character so a
# table's columns stay aligned, when stdout's encoding cannot print them (PYTHONIOENCODING=ascii,
# a C locale): elision ~, dashes -, arrows > <, bar blocks # (partial +); any other '?'.
_ASCII_FALLBACK: dict[str, str] = {
    "\u2026": "~", "\u2014": "-", "\u2013": "-", "\u2212": "-", "\u2192": ">", "\u25c0": "<",
    "\u2588": "#", "\u2589": "#", "\u258a": "#", "\u258b": "#",
    "\u258c": "+", "\u258d": "+", "\u258e": "+", "\u258f": "+",
    "\u00b7": ".", "\u2022": "*", "\u00d7": "x", "\u00f7": "/", "\u00b1": "~", "\u2264": "<",
    "\u2265": ">", "\u2248": "~", "\u00b5": "u", "\u03c3": "s", "\u03a3": "S", "\u00b2": "2",
    "\u221a": "v", "\u00a7": "S", "\u00a0": " ",
}
_FALLBACK_ERRORS = "hotspot-ascii-fallback"


def _fallback(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    chars = err.object[err.start:err.end]
    return "".join(_ASCII_FALLBACK.get(c, "?") for c in chars), err.end


def printable_in(text: str, encoding: str | None) -> str:
    """`text` as a stream in `encoding` can print it: unchanged when it can (UTF-8: the common
    case costs one encode), else each character it cannot print replaced by one ASCII look-alike
    (`...` would widen a table cell). An unknown encoding name leaves `text` as it is."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        pass
    except LookupError:
        return text
    import codecs

    try:
        codecs.lookup_error(_FALLBACK_ERRORS)
    except LookupError:
        codecs.register_error(_FALLBACK_ERRORS, _fallback)
    return text.encode(encoding, errors=_FALLBACK_ERRORS).decode(encoding)


DEFAULT_WIDTH = 100  # text width when neither COLUMNS nor a terminal says otherwise
MIN_WIDTH = 40


def terminal_width() -> int:
    """Width for text output: COLUMNS, else the terminal of stdout, else 100."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    try:
        if sys.stdout.isatty():
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
            if columns > 0:  # 0: a pseudo-terminal nobody gave a size (script, some CI runners)
                return max(MIN_WIDTH, columns)
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH


def fit_diagnostic(text: str, indent: int = 2) -> str:
    """A diagnostic wrapped to the width of the terminal stderr is (COLUMNS, else the terminal's);
    one line when stderr is not a terminal, so logs and scripts can grep it whole."""
    import textwrap

    if not _stderr_is_tty():
        return text
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        width = max(MIN_WIDTH, int(env))
    else:
        try:
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return text
        if columns <= 0:  # a pseudo-terminal without a size: one line, as in a log
            return text
        width = max(MIN_WIDTH, columns)
    if len(text) <= width:
        return text
    room = width - indent
    # a path longer than a line keeps its end (file name, line number); JSON has it whole
    text = " ".join(w if len(w) <= room else "…" + w[len(w) - room + 1:] for w in text.split(" "))
    return "\n".join(textwrap.wrap(text, width, subsequent_indent=" " * indent,
                                    break_long_words=False, break_on_hyphens=False))


# `--no-color` (any command) turns color off as NO_COLOR does (https://no-color.org: any value).
COLOR = {"off": False}
_STYLES = {"red": "1;31", "yellow": "33", "cyan": "36", "dim": "2"}


def color_on(stream: object) -> bool:
    """Whether text written to `stream` may carry ANSI colors: a terminal, NO_COLOR not set (to
    any value), no --no-color, TERM not `dumb`."""
    if COLOR["off"] or "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]  # any stream; None has no isatty
    except (AttributeError, ValueError, OSError):
        return False


def paint(text: str, style: str) -> str:
    """`text` in one of _STYLES (red, yellow, cyan, dim), reset after it."""
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"


def warn(message: str) -> None:
    text = fit_diagnostic(printable(f"warning: {message}", newlines=False), indent=9)
    if color_on(sys.stderr):
        text = paint("warning:", "yellow") + text[len("warning:"):]
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# Warnings on the register/LDS figures occupancy uses (hotspot/att/dispatch_occupancy.py, side-file rows):
# caveats on estimates, several per capture without counters (the bundled example has three).
RESOURCES_PREFIX = "resources: "


def warn_all(warnings: "Sequence[str]") -> None:
    """A result's warnings on stderr: each on its line, but those on the resource figures folded
    into one line naming their subjects, which --quiet drops (--format json keeps every one whole)."""
    resources = [w[len(RESOURCES_PREFIX):] for w in warnings if w.startswith(RESOURCES_PREFIX)]
    folded = False
    for w in warnings:
        if not w.startswith(RESOURCES_PREFIX):
            warn(w)
        elif not folded and not QUIET["on"]:  # where the first of them was
            folded = True
            if len(resources) == 1:
                warn(w)
                continue
            subjects = list(dict.fromkeys(r.split(" ", 1)[0].rstrip(":,;") for r in resources))
            warn(f"{RESOURCES_PREFIX}{len(resources)} notes on the register/LDS figures occupancy uses "
                 f"({', '.join(subjects)}); --format json has each in full")


# `--quiet` (any command): no progress lines; warnings and errors still print.
QUIET = {"on": False}


def note(message: str) -> None:
    """A line for the reader on stderr, written whole (a path in it is never shortened); --quiet
    drops it. Unlike a progress line the output cache keeps it, so a replay prints it too."""
    if QUIET["on"]:
        return
    sys.stderr.write(printable(message, newlines=False) + "\n")
    sys.stderr.flush()

# True while a progress line is being written: the output cache (hotspot/cache/output.py) keeps
# warnings and errors from stderr to replay them, but not progress.
PROGRESS = {"writing": False}


def _progress_write(text: str) -> None:
    PROGRESS["writing"] = True
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    finally:
        PROGRESS["writing"] = False


# Who else hears progress lines of the running command (the MCP server turns them into progress
# notifications); set per thread of work, so concurrent commands each have their own.
PROGRESS_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar("hotspot_progress_listener",
                                                                          default=None)


def progress(message: str) -> None:
    listener = PROGRESS_LISTENER.get()
    if listener is not None:
        listener(message)
    if QUIET["on"]:
        return
    _progress_write(f"{message}\n")


class Progress:
    """Progress of work that may take more than a second, on stderr only: nothing for the first
    second, then rich's live progress bar on a terminal (cleared when the work ends) or a plain
    line every few seconds in a log. Silent under --quiet. Call advance() as units finish and
    close() at the end."""

    FIRST_S = 1.0     # quiet below this: short work prints nothing
    TTY_EVERY_S = 0.1
    LOG_EVERY_S = 5.0

    def __init__(self, label: str, total: int, unit: str = "") -> None:
        import time

        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self._clock = time.monotonic
        self._start = self._next = self._clock() + self.FIRST_S
        self._tty = _stderr_is_tty()
        self._shown = False
        self._live: tuple[Any, Any] | None = None  # (rich Progress, task id) once shown on a terminal

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = self._clock()
        if now < self._next or QUIET["on"]:
            return
        self._next = now + (self.TTY_EVERY_S if self._tty else self.LOG_EVERY_S)
        self._show(now)

    def _show(self, now: float) -> None:
        if self._tty and self._show_live():
            self._shown = True
            return
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        elapsed = now - self._start + self.FIRST_S
        text = f"{self.label}: {self.done:,}/{self.total:,}{' ' + self.unit if self.unit else ''}{pct}, {elapsed:.0f} s"
        if self._tty:  # rich is not installed: one line rewritten in place
            _progress_write("\r" + text[: terminal_width() - 1] + "\x1b[K")
        else:
            _progress_write(text + "\n")
        self._shown = True

    def _show_live(self) -> bool:
        """Draw rich's progress bar (imported on first use: only work over a second pays for
        it); False when rich is not available. Refreshed by us, not by a thread of rich's, so
        every write to stderr goes through _progress_write."""
        PROGRESS["writing"] = True
        try:
            if self._live is None:
                try:
                    from rich.console import Console
                    from rich.progress import (BarColumn, MofNCompleteColumn, Progress as Bar,
                                               TextColumn, TimeElapsedColumn)
                except ImportError:
                    return False
                console = Console(file=sys.stderr, force_terminal=True, width=terminal_width())
                bar = Bar(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                          TextColumn(self.unit), TimeElapsedColumn(), console=console,
                          transient=True, auto_refresh=False)
                bar.start()
                self._live = (bar, bar.add_task(self.label, total=self.total or None))
            bar, task = self._live
            bar.update(task, completed=self.done)
            bar.refresh()
            return True
        finally:
            PROGRESS["writing"] = False

    def close(self) -> None:
        if self._live is not None:
            PROGRESS["writing"] = True
            try:
                self._live[0].stop()  # transient: the bar goes away
            finally:
                PROGRESS["writing"] = False
            self._live = None
        elif self._shown and self._tty and not QUIET["on"]:
            _progress_write("\r\x1b[K")  # the live line goes away; the result follows


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
