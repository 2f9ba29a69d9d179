"""Parsing of code.json `Source` strings: `file:LINE`, `file:?`, and inline chains `a -> b -> c`."""

from __future__ import annotations

from hotspot.record import record


CHAIN_SEPARATOR = " -> "


class SourceRef(str):
    """A row's source line, typed: the leaf `file` and `line` (None for `?`), written as its
    `file:line` label (JSON, text) because it is that string. `SourceRef()`, the empty label, is a
    row without source."""

    file: str | None
    line: int | None

    def __new__(cls, file: str | None = None, line: int | None = None) -> SourceRef:
        ref = super().__new__(cls, "" if file is None else f"{file}:{line if line is not None else '?'}")
        ref.file, ref.line = file, line
        return ref

    def __getnewargs__(self) -> tuple[str | None, int | None]:  # type: ignore[override]  # its parts, not str's text
        return (self.file, self.line)  # pickle and copy rebuild it from its parts, not its text

    @classmethod
    def from_text(cls, text: str) -> SourceRef:
        """The location a saved label names (JSON read back, hotspot/decode.py)."""
        loc = parse_source(text)
        return cls(loc.file, loc.line) if loc is not None else NO_SOURCE


@record
class SourceLoc:
    """Where an instruction came from. `file` is the leaf (innermost inlined location)."""

    file: str
    line: int | None  # None when the decoder wrote `?`
    chain: tuple[str, ...] = ()  # the full inline chain (leaf first) when there was one

    @property
    def label(self) -> SourceRef:
        # Kept once made: a code table shares one SourceLoc among the rows of a source line, and
        # the per-row tables would otherwise hold one copy of the string per row. (orjson leaves
        # underscore attributes out, and equality, hash and repr see the fields only.)
        label = self.__dict__.get("_label")
        if label is None:
            label = SourceRef(self.file, self.line)
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


NO_SOURCE = SourceRef()
