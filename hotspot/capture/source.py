"""Parsing of code.json `Source` strings: `file:LINE`, `file:?`, and inline chains `a -> b -> c`."""

from __future__ import annotations

from hotspot.record import record


CHAIN_SEPARATOR = " -> "


@record
class SourceLoc:
    """Where an instruction came from. `file` is the leaf (innermost inlined location)."""

    file: str
    line: int | None  # None when the decoder wrote `?`
    chain: tuple[str, ...] = ()  # the full inline chain (leaf first) when there was one

    @property
    def label(self) -> str:
        return f"{self.file}:{self.line if self.line is not None else '?'}"


def parse_source(text: str) -> SourceLoc | None:
    """`/p/k.py:64` -> SourceLoc; `a.h:258 -> k.hip:40` -> leaf a.h:258 with chain; `` -> None."""
    if not text:
        return None
    parts = tuple(p.strip() for p in text.split(CHAIN_SEPARATOR)) if CHAIN_SEPARATOR in text else ()
    leaf = parts[0] if parts else text.strip()
    file, sep, line_text = leaf.rpartition(":")
    if not sep or not file:
        return SourceLoc(file=leaf, line=None, chain=parts)
    line: int | None
    if line_text.isdigit():
        line = int(line_text)
    else:
        line = None
        if line_text != "?":
            # Not a line number (e.g. a Windows drive or a colon inside a name): keep it whole.
            return SourceLoc(file=leaf, line=None, chain=parts)
    return SourceLoc(file=file, line=line, chain=parts)
