"""Which memory addresses vary with the workgroup, from the ISA alone (no control flow, no values).

Used to count the bytes a grid can need from DRAM: a load whose address does not depend on the
workgroup id reads the same bytes in every workgroup (a small tensor the caches serve), so over the
grid it counts once, not once per workgroup; a load in a loop whose address registers the loop body
never writes re-reads the same bytes every iteration, so it counts once per wave.

Method: a forward taint pass over the executed instructions in code order, repeated until nothing
changes (loop back edges carry taint to earlier rows). A register read before any instruction writes
it holds a value the hardware put there at launch: a VGPR is a work-item id (`tid`), an SGPR a
workgroup id or another system value (`wg:sN`, one label per register, so an address can be told
to follow the x id but not the y id) unless it is the base of a scalar load (the kernel argument
pointer, uniform). An instruction's results carry the union of its sources' taints; loads
carry their address's taint. Conservative in the direction that matters: anything the pass cannot
follow counts as varying, so unique bytes are never undercounted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

WG = "wg:"   # prefix: varies with the system SGPR named after it ("wg:s2"), a workgroup id
TID = "tid"  # varies with the work-item id
# System SGPRs follow the user SGPRs in the order the hardware writes the enabled workgroup ids:
# x, y, z (then workgroup info and the scratch offset). More than this many distinct system SGPRs
# read as values: the dimension of each is not known.
MAX_WORKGROUP_DIMS = 3
# A register range wider than a wave's register file (512 VGPRs, HARDWARE.md §1) names no real
# operand: it is left out rather than expanded (hostile listings).
MAX_REGISTER_SPAN = 512
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
            lo, hi = int(m["lo"]), int(m["hi"])
            if 0 <= hi - lo < MAX_REGISTER_SPAN:  # a wider "range" is no real operand
                out.extend(f"{cls}{i}" for i in range(lo, hi + 1))
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


def taint_of_addresses(rows: Sequence[tuple[int, str]],
                       loops: Iterable[tuple[int, int]] = ()) -> dict[int, frozenset[str]]:
    """Per VMEM row (line_number -> taints of its address registers), over `rows` in code order.
    A read sees the last write before it in code order (else the launch value) and, inside a loop
    [first, last] (code.json line numbers), whatever the loop body writes to the register (carried
    around the back edge; passes repeat until that settles)."""
    parsed = [(n, *_operands(isa)) for n, isa in rows]
    spans = []
    for first, last in loops:
        inside = [p for p, (n, _, _) in enumerate(parsed) if first <= n <= last]
        if inside:
            spans.append((inside[0], inside[-1]))
    carried: dict[tuple[int, str], frozenset[str]] = {}
    out: dict[int, frozenset[str]] = {}
    for _ in range(MAX_PASSES):
        state: dict[str, frozenset[str]] = {}
        written: dict[tuple[int, str], frozenset[str]] = {}
        for p, (n, mn, ops) in enumerate(parsed):
            around = [k for k, (lo, hi) in enumerate(spans) if lo <= p <= hi]

            def read(r: str, uniform_base: bool) -> frozenset[str]:
                got = state.get(r)
                if got is None:  # the value the hardware put there at launch
                    got = frozenset() if uniform_base else frozenset({TID if r[0] in "va" else WG + r})
                for k in around:
                    got = got | carried.get((k, r), frozenset())
                return got

            dest, srcs = _dest_and_sources(mn, ops)
            smem_base = set(_regs(ops[1])) if _SMEM_LOAD.match(mn) and len(ops) > 1 else set()
            acc: frozenset[str] = frozenset()
            for r in srcs:
                acc |= read(r, r in smem_base)
            addr = address_registers(f"{mn} {', '.join(ops)}")
            if addr is not None:
                a: frozenset[str] = frozenset()
                for r in addr:
                    a |= read(r, False)
                out[n] = a
                if _STORE.match(mn):
                    continue
                acc = a
            for r in dest:
                state[r] = acc
                for k in around:
                    written[(k, r)] = written.get((k, r), frozenset()) | acc
        if written == carried:
            break
        carried = written
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


def workgroup_registers(taints: Iterable[str]) -> set[str]:
    return {t[len(WG):] for t in taints if t.startswith(WG)}


def workgroup_dims(rows: Sequence[tuple[int, str]]) -> dict[str, int] | None:
    """System SGPR -> workgroup dimension (0 x, 1 y, 2 z): the registers read at launch that are
    no scalar load's base, in register order (the hardware writes the enabled ids x, y, z in that
    order after the user SGPRs). None when more than MAX_WORKGROUP_DIMS are read: which is which is
    then not known."""
    first_write: dict[str, int] = {}
    parsed = [_operands(isa) for _, isa in rows]
    for p, (mn, ops) in enumerate(parsed):
        for r in _dest_and_sources(mn, ops)[0]:
            first_write.setdefault(r, p)
    system: set[str] = set()
    for p, (mn, ops) in enumerate(parsed):
        base = set(_regs(ops[1])) if _SMEM_LOAD.match(mn) and len(ops) > 1 else set()
        for r in _dest_and_sources(mn, ops)[1] + (address_registers(f"{mn} {', '.join(ops)}") or []):
            if r[0] == "s" and r not in base and first_write.get(r, len(parsed)) >= p:
                system.add(r)
    if len(system) > MAX_WORKGROUP_DIMS:
        return None
    return {r: k for k, r in enumerate(sorted(system, key=lambda r: int(r[1:])))}
