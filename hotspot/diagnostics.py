"""Diagnostic lines on stderr (stdout holds only data). Any layer may call these."""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    from hotspot.render.tables import fit_text

    sys.stderr.write(fit_text(f"warning: {message}") + "\n")
    sys.stderr.flush()


def progress(message: str) -> None:
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()
