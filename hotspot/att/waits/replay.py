"""Hot path of wait attribution, per wave: replay the counter rules over the executed order and align
the decoder's own edges (plain lists and dicts); hotspot/att/waits/accumulate.py `blame_wave`
charges each wait instance's stall to its producers."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress

from hotspot.att.waits.waitcnt_rules import (
    LGKM,
    ROLE_MEM,
    ROLE_WAIT,
    VM,
    LineTables,
)
from hotspot.capture import WaitcntEdges


def reconstruct(lines: Sequence[int], tables: LineTables
                ) -> tuple[list[tuple[int, list[int]]], list[int], int]:
    """Replay vm/lgkm over one wave's executed order (`lines`: the line of each record).

    Returns (entries, wait_positions, out_of_order_waits): one entry (wait index, producer indices)
    per non-empty pop, lgkm before vm within one wait, in execution order; the index of every wait
    instance; and how many lgkm waits with N > 0 ran while an SMEM was outstanding.
    """
    roles, pushes, waits, scalar = tables.roles, tables.pushes, tables.waits, tables.scalar
    vm: list[int] = []
    lg: list[int] = []
    smem_pending = False
    entries: list[tuple[int, list[int]]] = []
    positions: list[int] = []
    ooo = 0
    # only rows with a role matter: picked out at C speed (most rows of a sequence have none)
    for idx, line in compress(enumerate(lines), map(roles.__contains__, lines)):
        role = roles[line]
        if role == ROLE_MEM:
            mask = pushes[line]
            if mask & VM:
                vm.append(idx)
            if mask & LGKM:
                lg.append(idx)
                if line in scalar:
                    smem_pending = True
        elif role == ROLE_WAIT:
            positions.append(idx)
            vm_n, lg_n = waits[line]
            if lg_n >= 0:
                if lg_n > 0 and smem_pending:
                    ooo += 1
                k = len(lg) - lg_n
                if k > 0:
                    entries.append((idx, lg[:k]))
                    del lg[:k]
                if not lg:
                    smem_pending = False
            if vm_n >= 0:
                k = len(vm) - vm_n
                if k > 0:
                    entries.append((idx, vm[:k]))
                    del vm[:k]
    return entries, positions, ooo


def edge_keys(edges: WaitcntEdges) -> list[tuple[int, tuple[int, ...]]]:
    """Decoder edges as (waitcnt line, producer lines) keys."""
    return [(int(w), tuple(int(p[0]) for p in prods)) for w, prods in edges]


def entry_keys(ins: Sequence[list[int]], entries: list[tuple[int, list[int]]]
               ) -> list[tuple[int, tuple[int, ...]]]:
    return [(ins[w][4], tuple(ins[p][4] for p in prods)) for w, prods in entries]


def align_edges(ins: Sequence[list[int]], ekeys: list[tuple[int, tuple[int, ...]]],
                entries: list[tuple[int, list[int]]]
                ) -> tuple[list[tuple[int, list[int]]], int]:
    """Place the decoder's edges on wait instances; returns (entries, edges matched by reconstruction).

    Edges carry line numbers only. Where they equal the reconstruction (all corpus waves), the
    reconstruction's instance indices are used. Otherwise the two sequences are aligned; an edge
    the reconstruction did not produce goes on the next executed instance of its waitcnt after the
    previous placed edge, each producer on its latest issue before that wait.
    """
    skeys = entry_keys(ins, entries)
    if ekeys == skeys:
        return entries, len(ekeys)
    import difflib  # only for waves whose edges differ from the reconstruction

    out: list[tuple[int, list[int]]] = []
    matched = 0
    placed_from = 0
    sm = difflib.SequenceMatcher(None, ekeys, skeys, autojunk=False)
    for tag, e0, e1, s0, _s1 in sm.get_opcodes():
        if tag == "equal":
            for j in range(e1 - e0):
                out.append(entries[s0 + j])
                placed_from = entries[s0 + j][0]
            matched += e1 - e0
            continue
        for wline, plines in ekeys[e0:e1]:
            placed = _place_edge(ins, wline, plines, placed_from)
            if placed is not None:
                out.append(placed)
                placed_from = placed[0]
    return out, matched


def _place_edge(ins: Sequence[list[int]], wline: int, plines: tuple[int, ...], start: int
                ) -> tuple[int, list[int]] | None:
    n = len(ins)
    w = start
    while w < n and ins[w][4] != wline:
        w += 1
    if w >= n:
        return None
    prods: list[int] = []
    for pline in plines:
        p = w - 1
        while p >= 0 and (ins[p][4] != pline or p in prods):
            p -= 1
        if p >= 0:
            prods.append(p)
    return w, prods
