"""`TextEnum`: a state that is one of a few strings, typed, written and shown as its string.

A `(str, Enum)` member equals its value, hashes like it and orjson writes it as the value, so JSON
stays what the plain string gave. Python 3.11+ would show it as `Class.MEMBER` in f-strings and
`str()`: here both are the value, so text output does not change either.
"""

from __future__ import annotations

from enum import Enum


class TextEnum(str, Enum):
    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)
