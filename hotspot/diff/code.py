"""Same code or not: the two sides' instruction sequences compared before any number.

Instructions are compared as text without addresses: code.json's Vaddr is not read, and the target
operand of a branch (an address that moves whenever code is added above it) is masked. A rerun of
unchanged code is the null case of diff; a changed sequence is listed by source line.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from hotspot.record import record

# Branches whose last operand is a code address or label.
_BRANCH = re.compile(r"^(s_branch|s_cbranch_\w+|s_call_b64|s_setpc_b64|s_getpc_b64)\b")
# Changed regions listed in JSON (the text view shows fewer).
MAX_CHANGES = 50


@record
class CodeChange:
    kind: str  # added | removed | changed
    before: int  # instructions on the before side
    after: int  # instructions on the after side
    sources: list[str]  # source lines of the region (after side; before side for `removed`)
    before_isa: list[str]  # the first few instructions of the region, each side
    after_isa: list[str]


# What a changed sequence amounts to (CodeComparison.kind), from the narrowest reading that fits.
SAME = "same"
RENAMES = "renames"  # the same operations, only register numbers differ
REORDERED = "reordered"  # the same instructions in another order
PROLOGUE = "prologue"  # every change lies before the first loop
CHANGED = "changed"

# A register operand (v12, s[4:5], a[0:3], ttmp2, ...): masked to tell a rename from a change.
_REGISTER = re.compile(r"\b(?:v|s|a|ttmp)(?:\d+|\[\d+:\d+\])")


@record
class CodeComparison:
    same: bool
    basis: str  # "code" (every instruction of the kernel) or "executed" (a saved analysis)
    instructions_before: int
    instructions_after: int
    added: int
    removed: int
    changed: int
    changes: list[CodeChange]  # at most MAX_CHANGES regions, in code order
    summary: str
    # same | renames (registers only) | reordered (same instructions, other order) | prologue
    # (every change before the first loop) | changed
    kind: str = SAME


def normalize(isa: str) -> str:
    """An instruction's text without what moves with addresses (whitespace collapsed)."""
    text = " ".join(isa.split())
    if _BRANCH.match(text):
        head, _, _ = text.rpartition(" ")
        return f"{head} <target>" if head else text
    return text


def renamed(text: str) -> str:
    """An instruction's text with its register numbers masked."""
    return _REGISTER.sub("r", text)


def _kind(nb: list[str], na: list[str], b: Sequence[tuple[int, str, str]],
          a: Sequence[tuple[int, str, str]], opcodes: Sequence[tuple[str, int, int, int, int]],
          loops: tuple[int | None, int | None]) -> str:
    if [renamed(x) for x in nb] == [renamed(x) for x in na]:
        return RENAMES
    if sorted(nb) == sorted(na):
        return REORDERED
    first_b, first_a = loops
    if first_b is not None and first_a is not None:
        before_loop = all(
            (b0 >= len(b) or b[b0][0] < first_b) and (b1 == b0 or b[b1 - 1][0] < first_b)
            and (a0 >= len(a) or a[a0][0] < first_a) and (a1 == a0 or a[a1 - 1][0] < first_a)
            for tag, b0, b1, a0, a1 in opcodes if tag != "equal")
        if before_loop:
            return PROLOGUE
    return CHANGED


_KIND_WORDS = {RENAMES: "register renames only", REORDERED: "reordered only",
               PROLOGUE: "prologue only (every change before the first loop)"}


def matched_lines(before: Sequence[tuple[int, str, str]], after: Sequence[tuple[int, str, str]]
                  ) -> list[tuple[int, int]]:
    """(before line number, after line number) of each instruction the comparison finds
    unchanged (addresses ignored, as `compare_code` reads them)."""
    b = [r for r in before if not r[1].lstrip().startswith(";")]
    a = [r for r in after if not r[1].lstrip().startswith(";")]
    matcher = difflib.SequenceMatcher(None, [normalize(r[1]) for r in b],
                                      [normalize(r[1]) for r in a], autojunk=False)
    return [(b[i][0], a[j][0]) for tag, b0, b1, a0, _a1 in matcher.get_opcodes() if tag == "equal"
            for i, j in zip(range(b0, b1), range(a0, a0 + b1 - b0))]


def compare_code(before: Sequence[tuple[int, str, str]], after: Sequence[tuple[int, str, str]],
                 basis: str, loops: tuple[int | None, int | None] = (None, None)
                 ) -> tuple[CodeComparison, dict[int, int] | None]:
    """The comparison, and when the code is the same the map before line number -> after line
    number (instruction k to instruction k). `loops`: each side's first loop's first code line
    (None: no loop), to tell a prologue-only change."""
    b = [r for r in before if not r[1].lstrip().startswith(";")]
    a = [r for r in after if not r[1].lstrip().startswith(";")]
    raw_b, raw_a = [r[1] for r in b], [r[1] for r in a]
    # the same text (a rerun) is the same code without normalizing each instruction
    nb = raw_b if raw_b == raw_a else [normalize(x) for x in raw_b]
    na = raw_a if raw_b == raw_a else [normalize(x) for x in raw_a]
    if nb == na:
        what = "instructions" if basis == "code" else "executed instructions"
        return (CodeComparison(True, basis, len(b), len(a), 0, 0, 0, [],
                               f"same code ({len(a):,} {what}, addresses ignored)"),
                {rb[0]: ra[0] for rb, ra in zip(b, a)})
    changes: list[CodeChange] = []
    counts = {"added": 0, "removed": 0, "changed": 0}
    matcher = difflib.SequenceMatcher(None, nb, na, autojunk=False)
    opcodes = matcher.get_opcodes()
    for tag, b0, b1, a0, a1 in opcodes:
        if tag == "equal":
            continue
        kind = {"insert": "added", "delete": "removed", "replace": "changed"}[tag]
        if kind == "changed":  # k instructions replaced by m: min(k, m) changed, the rest added/removed
            counts["changed"] += min(b1 - b0, a1 - a0)
            counts["removed"] += max(0, (b1 - b0) - (a1 - a0))
            counts["added"] += max(0, (a1 - a0) - (b1 - b0))
        else:
            counts[kind] += (b1 - b0) + (a1 - a0)
        side = b[b0:b1] if kind == "removed" else a[a0:a1]
        sources = list(dict.fromkeys(r[2] for r in side if r[2]))
        if len(changes) < MAX_CHANGES:
            changes.append(CodeChange(kind, b1 - b0, a1 - a0, sources[:5],
                                      [r[1] for r in b[b0:min(b1, b0 + 3)]],
                                      [r[1] for r in a[a0:min(a1, a0 + 3)]]))
    parts = [f"{v:,} {k}" for k, v in counts.items() if v]
    kind = _kind(nb, na, b, a, opcodes, loops)
    what = f"{_KIND_WORDS[kind]}: " if kind in _KIND_WORDS else ""
    summary = (f"code changed: {what}{', '.join(parts)} instruction(s) "
               f"({len(b):,} before, {len(a):,} after{'' if basis == 'code' else ', executed only'})")
    return (CodeComparison(False, basis, len(b), len(a), counts["added"], counts["removed"],
                           counts["changed"], changes, summary, kind), None)
