"""Which memory addresses vary with the workgroup, from the ISA alone (no control flow, no values).

Used to count the bytes a grid can need from DRAM: a load whose address does not depend on the
workgroup id reads the same bytes in every workgroup (a small tensor the caches serve), so over the
grid it counts once, not once per workgroup; a load in a loop whose address registers the loop body
never writes re-reads the same bytes every iteration, so it counts once per wave.

Method: a forward taint pass over the executed instructions in code order, repeated until nothing
changes (loop back edges carry taint to earlier rows). A register read before any instruction writes
it holds a value the hardware put there at launch: a VGPR is a work-item id (`tid`), an SGPR the
workgroup id or another system value (`wg`) unless it is the base of a scalar load (the kernel
argument pointer, uniform). An instruction's results carry the union of its sources' taints; loads
carry their address's taint. Conservative in the direction that matters: anything the pass cannot
follow counts as varying, so unique bytes are never undercounted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

WG = "wg"    # varies with the workgroup id (or another system SGPR)
TID = "tid"  # varies with the work-item id
_REG = re.compile(r"(?<![\w.$])(?P<cls>[vsa])(?:(?P<one>\d+)|\[(?P<lo>\d+):(?P<hi>\d+)\])(?!\w)")
# Mnemonics that write no register operand (their operands are all sources).
_NO_DEST = re.compile(r"^(s_waitcnt|s_branch|s_cbranch|s_barrier|s_endpgm|s_nop|s_setprio|s_sendmsg|"
                      r"s_cmp|s_bitcmp|s_dcache|s_icache|s_set|s_sleep|s_trap|s_ttrace|s_store|"
                      r"s_buffer_store|s_memtime|s_memrealtime|buffer_store|global_store|flat_store|"
                      r"scratch_store|ds_write|ds_store|buffer_wbinvl1|buffer_wbl2|buffer_inv|"
                      r"v_cmpx|s_inst_prefetch|s_clause|s_delay)")
_SMEM_LOAD = re.compile(r"^s_(load|buffer_load|scratch_load)_")
_STORE = re.compile(r"^(buffer|global|flat|scratch)_store")
_FLAT_LIKE_STORE = re.compile(r"^(global|flat|scratch)_store")
MAX_PASSES = 4


def _regs(text: str) -> list[str]:
    out = []
    for m in _REG.finditer(text):
        cls = m["cls"]
        if m["one"] is not None:
            out.append(f"{cls}{m['one']}")
        else:
            out.extend(f"{cls}{i}" for i in range(int(m["lo"]), int(m["hi"]) + 1))
    return out


def _operands(isa: str) -> tuple[str, list[str]]:
    text = isa.split(";", 1)[0].split("//", 1)[0].strip()
    parts = text.split(None, 1)
    if len(parts) < 2:
        return (parts[0] if parts else ""), []
    return parts[0], [p.strip() for p in parts[1].split(",")]


def _lds_dma(mn: str, ops: list[str]) -> bool:
    """A load writing LDS directly (`buffer_load_dword vaddr, s[..], soff offen lds`,
    `global_load_lds_dword v[..], off`): no register destination, every operand is address."""
    return mn.startswith(("buffer_load", "global_load", "flat_load", "scratch_load")) and (
        "_lds_" in mn or any(re.search(r"\blds\b", op) for op in ops[1:]))


def _flat_atomic_no_return(mn: str, ops: list[str]) -> bool:
    # global_atomic_add vaddr, vdata, saddr|off (3 operands); with a return the dest comes first
    return bool(re.match(r"^(global|flat|scratch)_atomic", mn)) and len(ops) == 3


def address_registers(isa: str) -> list[str] | None:
    """The registers a VMEM instruction's address is built from; None for other instructions."""
    mn, ops = _operands(isa)
    if not mn.startswith(("buffer_", "global_", "flat_", "scratch_", "tbuffer_")):
        return None
    if _lds_dma(mn, ops):
        picked = ops
    elif _FLAT_LIKE_STORE.match(mn) or _flat_atomic_no_return(mn, ops):
        # global_store vaddr, vdata, saddr|off: the data operand is not the address
        picked = [ops[0]] + ops[2:] if ops else []
    else:
        picked = ops[1:]  # loads: dest first; buffer stores: data first
    return [r for op in picked for r in _regs(op)]


def _dest_and_sources(mn: str, ops: list[str]) -> tuple[list[str], list[str]]:
    if not ops or _NO_DEST.match(mn) or _lds_dma(mn, ops) or _flat_atomic_no_return(mn, ops):
        return [], [r for op in ops for r in _regs(op)]
    return _regs(ops[0]), [r for op in ops[1:] for r in _regs(op)]


def taint_of_addresses(rows: Sequence[tuple[int, str]]) -> dict[int, frozenset[str]]:
    """Per VMEM row (line_number -> taints of its address registers), over `rows` in code order."""
    parsed = [(n, *_operands(isa)) for n, isa in rows]
    # first row (position) writing each register: a read at or before it sees the launch value
    first_write: dict[str, int] = {}
    for p, (_, mn, ops) in enumerate(parsed):
        for r in _dest_and_sources(mn, ops)[0]:
            first_write.setdefault(r, p)
    taint: dict[str, frozenset[str]] = {}
    out: dict[int, frozenset[str]] = {}

    def read(r: str, p: int, uniform_base: bool) -> frozenset[str]:
        got = taint.get(r, frozenset())
        if first_write.get(r, len(parsed)) >= p and not uniform_base:
            got = got | {TID if r[0] in "va" else WG}  # the value the hardware put there at launch
        return got

    for _ in range(MAX_PASSES):
        changed = False
        for p, (n, mn, ops) in enumerate(parsed):
            dest, srcs = _dest_and_sources(mn, ops)
            smem_base = set(_regs(ops[1])) if _SMEM_LOAD.match(mn) and len(ops) > 1 else set()
            acc: set[str] = set()
            for r in srcs:
                acc |= read(r, p, r in smem_base)
            addr = address_registers(f"{mn} {', '.join(ops)}")
            if addr is not None:
                a: set[str] = set()
                for r in addr:
                    a |= read(r, p, False)
                new = frozenset(a)
                if out.get(n) != new:
                    out[n] = new
                    changed = True
                if _STORE.match(mn):
                    continue
                acc = set(a)
            result = frozenset(acc)
            for r in dest:
                old = taint.get(r)
                merged = result if old is None else old | result
                if merged != old:
                    taint[r] = merged
                    changed = True
        if not changed:
            break
    return out


def loop_invariant_addresses(rows: Sequence[tuple[int, str]],
                             loops: Iterable[tuple[int, int]]) -> set[int]:
    """VMEM rows inside a loop [first, last] (code.json line numbers) whose address registers no
    row of that loop body writes: every iteration reads the same bytes."""
    body: dict[tuple[int, int], set[str]] = {}
    out: set[int] = set()
    for first, last in loops:
        writes: set[str] = set()
        for n, isa in rows:
            if first <= n <= last:
                mn, ops = _operands(isa)
                writes.update(_dest_and_sources(mn, ops)[0])
        body[(first, last)] = writes
    for n, isa in rows:
        addr = address_registers(isa)
        if not addr:
            continue
        for (first, last), writes in body.items():
            if first <= n <= last and not (set(addr) & writes):
                out.add(n)
    return out
