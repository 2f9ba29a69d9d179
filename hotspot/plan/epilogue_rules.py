"""`store-epilogue`: the output tile's stores cost a material share of the waves' time, and the ISA
shows why: narrower than 16 bytes per lane, or one lane's stores spread over rows instead of filling
contiguous bytes.

The epilogue is the VMEM stores outside every repeating loop (run once per wave, after the main
loop). Each store instruction takes an issue slot and a request whatever its width, so 8-byte
stores need twice the instructions of 16-byte ones; stores whose immediate offsets step by more
than their width (a row stride: an MFMA output fragment written row by row) write partial lines
that a register transpose (DPP/permlane) or a pass through LDS would turn into whole rows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from statistics import median

from hotspot.arch.classify import Category, mnemonic_of
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.access_rules import WIDE_BYTES, store_bytes_per_lane
from hotspot.plan.context import PlanContext, in_loop
from hotspot.plan.def_use import reads, registers, writes
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site

# The epilogue is worth a rewrite when its stores hold at least a tenth of all stall (the same
# share at which a barrier pattern is worth balancing, resource_rules.BARRIER_MIN_SHARE).
STORE_EPILOGUE_MIN_SHARE = 0.10
# Row-strided stores already 16 bytes wide: a transpose makes each instruction's lanes fill whole
# lines; the instructions stay, the partial-line write traffic goes. Half of the store time is the
# high end taken for that (the instruction issue stays, the line traffic is the other half).
STRIDED_STORE_HIGH = 0.5
# The low end of the estimate is this fraction of the high end: wider stores still wait for their
# acknowledgements at s_endpgm, and a transpose through LDS adds its own instructions.
STORE_EPILOGUE_LOW_FACTOR = 0.5
_OFFSET = re.compile(r"offset:\s*(0x[0-9a-f]+|\d+)", re.IGNORECASE)


def _address_key(isa: str) -> str:
    """The store's address operands (everything but the data and the immediate offset): stores
    with the same key differ only by their offset."""
    parts = isa.split(None, 1)
    ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    data = 0 if parts[0].lower().startswith(("buffer_", "tbuffer_")) else 1  # buffer: vdata first
    kept = [o for i, o in enumerate(ops) if i != data]
    return " ".join(_OFFSET.sub("", " ".join(kept)).split())


def _is_load(isa: str) -> bool:
    mnemonic = mnemonic_of(isa)
    return "load" in mnemonic or "read" in mnemonic


def _offset(isa: str) -> int:
    m = _OFFSET.search(isa)
    return int(m[1], 0) if m else 0


def _address_register(isa: str) -> str | None:
    """The first register of the store's address operand (global/flat: the first operand; buffer:
    the second, its vaddr)."""
    parts = isa.split(None, 1)
    ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    at = 1 if parts and parts[0].lower().startswith(("buffer_", "tbuffer_")) else 0
    if len(ops) <= at:
        return None
    names = sorted(registers(ops[at]), key=_register_order)
    return names[0] if names else None


def _register_order(name: str) -> tuple[str, int]:
    digits = "".join(ch for ch in name if ch.isdigit())
    return (name.rstrip("0123456789"), int(digits) if digits else 0)


_ADD = re.compile(r"^[vs]_add(?:_co|_nc)?_u32(?:_e32|_e64)?$|^s_add_u32$")
_LITERAL = re.compile(r"^-?(0x[0-9a-f]+|\d+)$", re.IGNORECASE)


def _constant_step(isa: str, register: str) -> int | None:
    """The constant an instruction adds to `register` in place (`v_add_co_u32 v60, vcc, 0x2000,
    v60`), 0 when it does not write it, None when it writes it some other way."""
    if register not in writes(isa):
        return 0
    parts = isa.split(None, 1)
    if not _ADD.match(parts[0].lower()) or register not in reads(isa):
        return None
    literals = [o.strip() for o in parts[1].split(",")[1:] if _LITERAL.match(o.strip())]
    return int(literals[0], 0) if len(literals) == 1 else None


def store_stride(ctx: PlanContext, stores: list[InstructionStat]) -> int | None:
    """The median byte step from one store of a lane to its next, over consecutive stores (static
    order) with the same address operands: the difference of their immediate offsets plus the
    constants added to the address register in between; None without two such stores."""
    ordered = sorted(stores, key=lambda s: s.line_number)
    steps = []
    for a, b in zip(ordered, ordered[1:]):
        if _address_key(a.isa) != _address_key(b.isa):
            continue
        register = _address_register(a.isa)
        moved: int | None = 0
        for n in ctx.order:
            if a.line_number < n < b.line_number and register is not None and moved is not None:
                step = _constant_step(ctx.instructions[n].isa, register)
                moved = None if step is None else moved + step
        if moved is not None:
            steps.append(abs(_offset(b.isa) - _offset(a.isa) + moved))
    return int(median(steps)) if steps else None


def store_epilogue(ctx: PlanContext, rule: Rule) -> Outcome:
    stores = [i for i in ctx.executed(Category.VMEM_STORE) if not in_loop(ctx, i.line_number)]
    if not stores:
        return "no VMEM store outside the repeating loops (no epilogue)"
    rows = {s.line_number for s in stores}
    # waits on the stores alone (a drain before the end, a fence); a wait that also holds loads is
    # the load's (store-gated-vmcnt judges the stores there)
    waited = sum(p.blamed_stall for w in ctx.waits()
                 if all(p.line_number in rows or not _is_load(p.isa) for p in w.producers)
                 for p in w.producers if p.line_number in rows)
    issue = sum(s.stall for s in stores)
    target = issue + waited
    share = target / ctx.total_stall if ctx.total_stall else 0.0
    if share < STORE_EPILOGUE_MIN_SHARE:
        return f"the epilogue's stores hold {share:.0%} of stall (< {STORE_EPILOGUE_MIN_SHARE:.0%})"
    widths = [w for w in (store_bytes_per_lane(s.isa) for s in stores) if w]
    if not widths:
        return "the epilogue's store widths are unknown"
    width = min(widths)
    stride = store_stride(ctx, stores)
    per_wave = sum(s.hit for s in stores) / max(1, ctx.traced_waves)
    narrow = width < WIDE_BYTES
    spread = stride is not None and stride > width
    if not narrow and not spread:
        return f"the epilogue already stores {width} bytes per lane, contiguous per lane"
    high = 1.0 - width / WIDE_BYTES if narrow else STRIDED_STORE_HIGH
    how = []
    if spread:
        how.append(f"one lane's stores step {stride:,} bytes apart with {width} bytes each (a row stride, "
                   "from the offsets and the constants added to the address between the stores: every "
                   "instruction writes pieces of several rows, partial lines)")
    if narrow:
        how.append(f"{width} bytes per lane where {WIDE_BYTES} fit one instruction "
                   f"({WIDE_BYTES // width}x the store instructions)")
    fix = ("Write the tile so each lane stores 16 contiguous bytes of one row: "
           + ("transpose the fragment in registers (v_permlane*/DPP) or through LDS (ds_write the "
              "fragment, ds_read_b128 row-contiguous) before the global stores; " if spread else "")
           + ("merge a lane's neighbouring values into one dwordx4 store (pack, and convert to the output "
              "type first: bf16/fp8 halve or quarter the bytes); " if narrow else "")
           + "then the wave writes whole 128-byte lines with a quarter of the instructions.")
    top = max(stores, key=lambda s: (s.stall, -s.line_number))
    sites = []
    for s in sorted(stores, key=lambda s: (-s.stall, s.line_number)):
        loc = ctx.location_of(s)
        sites.append(Site(None, [s.line_number], loc.file, loc.line, s.stall))
    ev = [Evidence("epilogue_store_rows", len(stores)), Evidence("stores_per_wave", round(per_wave, 1)),
          Evidence("store_bytes_per_lane", width, WIDE_BYTES, "<"),
          Evidence("store_offset_stride_bytes", stride if stride is not None else "n/a"),
          Evidence("store_stall_share_of_stall", round(share, 3), STORE_EPILOGUE_MIN_SHARE, ">="),
          Evidence("store_issue_stall_cycles", issue), Evidence("store_wait_stall_cycles", int(waited))]
    return [Candidate(
        ctx.location_of(top), ev, int(target),
        f"the epilogue's {len(stores)} store row(s) ({per_wave:,.0f} per wave) hold {share:.0%} of stall: "
        + "; ".join(how),
        title=f"store epilogue: {len(stores)} stores of {width} B per lane"
              + (f", {stride:,} B apart" if spread and stride is not None else ""),
        fix=fix, removable=(STORE_EPILOGUE_LOW_FACTOR * high, high),
        basis=(f"{'wider stores cut the store instructions by ' + str(WIDE_BYTES // width) + 'x' if narrow else ''}"
               f"{' and ' if narrow and spread else ''}"
               f"{'row-contiguous lanes write whole lines instead of partial ones' if spread else ''}; "
               f"the low end is {STORE_EPILOGUE_LOW_FACTOR:g}x (acknowledgements still drain at the end, "
               "a transpose adds instructions)"),
        sites=sites)]
