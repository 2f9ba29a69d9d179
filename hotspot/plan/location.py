"""Where a plan item says to edit (a record of its own: the rule context builds it, the plan items
and the views carry it)."""

from __future__ import annotations

from hotspot.record import record


@record
class Location:
    """Where to edit: source file:line and the instruction (code.json row). Kernel-wide items carry
    only the kernel name (file/line/line_number null)."""

    file: str | None
    line: int | None
    line_number: int | None
    isa: str | None
    kernel: str
