"""Color for the text views on a terminal: priorities, warnings and bars stand out. Applied to the
finished page (widths are measured on the plain text), only when hotspot/diagnostics.py
`color_on` says the stream takes it (a terminal, no NO_COLOR, no --no-color, TERM not dumb)."""

from __future__ import annotations

import re

from hotspot.diagnostics import paint

_PRIORITY = re.compile(r"\[(HIGH|MED|LOW)\]")
_PRIORITY_STYLE = {"HIGH": "red", "MED": "yellow", "LOW": "dim"}
_BAR = re.compile(r"[█▉▊▋▌▍▎▏]+")
_WARNING = re.compile(r"^(\s*)(warning:|trust: (?!ok\b)\S+)", re.MULTILINE)


def colorize(text: str) -> str:
    """`text` with ANSI colors on `[HIGH]`/`[MED]`/`[LOW]`, `warning:` and untrusted `trust:`
    lines' first words, and the share bars."""
    text = _PRIORITY.sub(lambda m: paint(m.group(0), _PRIORITY_STYLE[m.group(1)]), text)
    text = _WARNING.sub(lambda m: m.group(1) + paint(m.group(2), "yellow"), text)
    return _BAR.sub(lambda m: paint(m.group(0), "cyan"), text)
