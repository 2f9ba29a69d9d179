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
        # Kept once made: a code table shares one SourceLoc among the rows of a source line, and
        # the per-row tables would otherwise hold one copy of the string per row. (orjson leaves
        # underscore attributes out, and equality, hash and repr see the fields only.)
        label = self.__dict__.get("_label")
        if label is None:
            label = f"{self.file}:{self.line if self.line is not None else '?'}"
            object.__setattr__(self, "_label", label)
        return label


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
