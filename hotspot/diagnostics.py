"""Diagnostic lines on stderr (stdout holds only data). Any layer may call these."""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def progress(message: str) -> None:
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()
