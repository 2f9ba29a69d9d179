"""Which counter each memory instruction increments and what each s_waitcnt waits for, under a GPU
generation's rules (hotspot/arch/waitcnt.py; the decoder applies the same), and the per-row tables
of the wave pass."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from hotspot.arch.waitcnt import GFX9, WaitcntRules
from hotspot.arch.classify import LGKM_CLASSES as CATEGORY_LGKM_CLASSES
from hotspot.arch.classify import LGKM_WAITS, WAIT_CATEGORIES, Category, classify, mnemonic_of
from hotspot.capture import CodeRow
from hotspot.record import record

# Counter lists (bit mask of what an instruction increments).
VM = 1
LGKM = 2
# Roles of a code row in the wave pass (only rows with a role are kept in the lookup dicts).
ROLE_MEM = 1
ROLE_WAIT = 2
ROLE_BARRIER = 3
NOT_WAITED = -1  # threshold of a counter an s_waitcnt does not name
NO_PRODUCER = -1  # producer line of the "nothing outstanding" bucket

# lgkm breakdown classes, in report order; `vmem` (the vm producers of mixed waits) and `none`
# (instances with nothing outstanding) are reported beside them, so everything sums to the stall.
LGKM_CLASSES: tuple[str, ...] = CATEGORY_LGKM_CLASSES
BREAKDOWN_CLASSES: tuple[str, ...] = LGKM_CLASSES + ("vmem", "none")
LGKM_WAIT_CATEGORIES = LGKM_WAITS


@record
class LineTables:
    """Per code row facts the wave pass needs, classified once up front (picklable).

    Only rows that matter to the pass appear: `roles` maps line_number -> ROLE_*; `pushes` the
    counter mask of memory rows; `scalar` the SMEM rows (they make lgkm out of order); `waits` the
    (vm threshold, lgkm threshold) of each s_waitcnt (NOT_WAITED when a counter is not named).
    """

    roles: dict[int, int]
    pushes: dict[int, int]
    scalar: frozenset[int]
    waits: dict[int, tuple[int, int]]
    # what the wave pass derives from these tables once (hotspot/att/engine/groups.py: the native
    # replay's table, the barrier rows), kept with them; not part of their value. Pickled with them
    # into each pool task on purpose: for ck_bmm's tables (114 KB with it, 9.8 KB without) the
    # extra pickle round trip costs ~0.3 ms a task, rebuilding it in the worker ~0.6 ms
    derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)


def counter_mask(isa: str, rules: WaitcntRules = GFX9) -> tuple[int, bool]:
    """(VM/LGKM mask, is_scalar_memory) of one instruction under the decoder's push rules."""
    mn = mnemonic_of(isa)
    if mn.startswith(rules.flat_prefix):
        return VM | LGKM, False
    if mn.startswith(rules.vm_prefixes):
        return VM, False
    if classify(isa).category is Category.SMEM:
        return LGKM, True
    if mn.startswith(rules.lgkm_prefixes):
        return LGKM, False
    return 0, False


def wait_thresholds(isa: str) -> tuple[int, int] | None:
    """(vm N, lgkm N) of an s_waitcnt; None for rows that are not gfx9 s_waitcnt."""
    c = classify(isa)
    if c.mnemonic != "s_waitcnt":
        return None
    named = dict(c.wait_counters)
    if not named:
        # `s_waitcnt 0` (all fields zero) waits for every counter to drain.
        operand = isa.strip()[len(c.mnemonic):].strip()
        return (0, 0) if operand in ("0", "0x0") else (NOT_WAITED, NOT_WAITED)
    vm = named.get("vmcnt", NOT_WAITED)
    lgkm = named.get("lgkmcnt", NOT_WAITED)
    return vm, lgkm


def build_tables(rows: Iterable[CodeRow], rules: WaitcntRules | None = GFX9) -> LineTables:
    """Per line: its role (wait, barrier, memory producer) and what it pushes. `rules` None (a GPU
    generation without s_waitcnt rules): no line is a producer, so no wait is attributed."""
    roles: dict[int, int] = {}
    pushes: dict[int, int] = {}
    scalar: set[int] = set()
    waits: dict[int, tuple[int, int]] = {}
    for r in rows:
        cat = classify(r.isa).category
        if cat in WAIT_CATEGORIES:
            roles[r.line_number] = ROLE_WAIT
            waits[r.line_number] = wait_thresholds(r.isa) or (NOT_WAITED, NOT_WAITED)
            continue
        if cat is Category.BARRIER:
            roles[r.line_number] = ROLE_BARRIER
            continue
        mask, is_scalar = counter_mask(r.isa, rules) if rules is not None else (0, False)
        if mask:
            roles[r.line_number] = ROLE_MEM
            pushes[r.line_number] = mask
            if is_scalar:
                scalar.add(r.line_number)
    return LineTables(roles, pushes, frozenset(scalar), waits)


# ---------------------------------------------------------------------------------------------
# per wave (hot path)
