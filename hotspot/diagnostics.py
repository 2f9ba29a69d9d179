"""Diagnostic lines on stderr (stdout holds only data). Any layer may call these."""

from __future__ import annotations

import os
import sys

DEFAULT_WIDTH = 100  # text width when neither COLUMNS nor a terminal says otherwise
MIN_WIDTH = 40


def terminal_width() -> int:
    """Width for text output: COLUMNS, else the terminal of stdout, else 100."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    try:
        if sys.stdout.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH


def fit_diagnostic(text: str, indent: int = 2) -> str:
    """A diagnostic wrapped to the width a person sees (COLUMNS, or stderr is a terminal); one
    line otherwise, so logs and scripts can grep it whole."""
    import textwrap

    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        width = max(MIN_WIDTH, int(env))
    else:
        try:
            if not sys.stderr.isatty():
                return text
            width = max(MIN_WIDTH, os.get_terminal_size(sys.stderr.fileno()).columns)
        except (OSError, ValueError, AttributeError):
            return text
    if len(text) <= width:
        return text
    room = width - indent
    # a path longer than a line keeps its end (file name, line number); JSON has it whole
    text = " ".join(w if len(w) <= room else "…" + w[len(w) - room + 1:] for w in text.split(" "))
    return "\n".join(textwrap.wrap(text, width, subsequent_indent=" " * indent,
                                    break_long_words=False, break_on_hyphens=False))


def warn(message: str) -> None:
    sys.stderr.write(fit_diagnostic(f"warning: {message}", indent=9) + "\n")
    sys.stderr.flush()


def progress(message: str) -> None:
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()
