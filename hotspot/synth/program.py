"""Turn a program spec (generated mix or explicit list) into static rows plus control flow."""

from __future__ import annotations

import random
from dataclasses import dataclass

from hotspot.arch.classify import mnemonic_of
from hotspot.arch.mfma import mfma_passes as table_passes
from hotspot.arch.mfma import parse_mfma
from hotspot.errors import UsageError
from hotspot.synth import isa as I
from hotspot.synth.spec import ExplicitProgram, InstructionMix, Program, SourceSpec
from hotspot.record import record


@record
class Row:
    isa: str
    source: str
    info: I.OpInfo


@record
class Code:
    """Static program: rows (index 0 = LineNumber 1), loops and forward branches (0-based rows)."""

    rows: tuple[Row, ...]
    loop_end: dict[int, tuple[int, int]]          # back-edge row -> (loop start row, trips)
    forward: dict[int, tuple[int, float]]          # branch row -> (target row, taken probability)


def build(program: Program, arch: str, sources: SourceSpec, rng: random.Random) -> Code:
    if isinstance(program, ExplicitProgram):
        return _explicit(program, arch)
    return _generated(program, arch, sources, rng)


def _explicit(p: ExplicitProgram, arch: str) -> Code:
    if not p.instructions:
        raise UsageError("an explicit program needs at least one instruction")
    if mnemonic_of(p.instructions[-1].isa) != "s_endpgm":
        raise UsageError("an explicit program must end with s_endpgm")
    rows = tuple(Row(ins.isa, ins.source, I.classify(ins.isa, arch)) for ins in p.instructions)
    loop_end: dict[int, tuple[int, int]] = {}
    for lp in p.loops:
        if not (0 <= lp.start <= lp.end < len(rows) - 1) or lp.trips < 1:
            raise UsageError(f"bad loop {lp}: need 0 <= start <= end < last row and trips >= 1")
        if rows[lp.end].info.kind != "branch":
            raise UsageError(f"loop end row {lp.end} must be a branch, got {rows[lp.end].isa!r}")
        if lp.end in loop_end:
            raise UsageError(f"two loops end at row {lp.end}")
        loop_end[lp.end] = (lp.start, lp.trips)
    spans = sorted((lp.start, lp.end) for lp in p.loops)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        if s2 <= e1 and e2 > e1:
            raise UsageError("loops must be disjoint or properly nested")
    return Code(rows, loop_end, {})


# --- generated mix -------------------------------------------------------------------------------

@dataclass(eq=False)  # identity comparison: ops are tracked by object in the counter lists
class _Op:
    isa: str
    dep: "_Op | None" = None        # the producer whose result this op consumes
    barrier: bool = False
    line: int = 0                   # source line in the kernel file (0: helper file)
    branch_to: int | None = None    # forward branch: number of following ops it skips


_VALU = ("v_add_u32_e32 v{d}, v{a}, v{b}", "v_lshlrev_b32_e32 v{d}, 3, v{a}", "v_and_b32_e32 v{d}, 15, v{a}",
         "v_mov_b32_e32 v{d}, 0", "v_fma_f32 v{d}, v{a}, v{b}, v{d}", "v_cvt_f32_f16_e32 v{d}, v{a}",
         "v_lshl_or_b32 v{d}, v{a}, 12, v{b}", "v_pk_add_f32 v[{d}:{d1}], v[{a}:{a1}], v[{b}:{b1}]",
         "v_mul_f32_e32 v{d}, v{a}, v{b}", "v_max_f32_e32 v{d}, v{a}, v{b}")
_SALU = ("s_mov_b32 s{d}, s{a}", "s_and_b32 s{d}, s{a}, 0xffff", "s_add_u32 s{d}, s{a}, 0x1000",
         "s_lshl_b32 s{d}, s{a}, 4", "s_mul_i32 s{d}, s{a}, s{b}", "s_mov_b32 s{d}, -1")


class _Emitter:
    """Makes ops with plausible register numbers and source lines."""

    def __init__(self, rng: random.Random, arch: str, mix: InstructionMix) -> None:
        self.rng = rng
        self.vreg = 40
        self.line = 20 + 4 * rng.randrange(10)
        self.mfma = mix.mfma_op or I.DEFAULT_MFMA[arch]
        if parse_mfma(self.mfma) is None:
            raise UsageError(f"unknown MFMA mnemonic {self.mfma!r}",
                             f"e.g. {I.DEFAULT_MFMA[arch]} (any MFMA shape of the target)")
        if table_passes(self.mfma, arch) is None:  # the arch table lists every shape a target has
            raise UsageError(f"{self.mfma} does not exist on {arch}",
                             "pick an MFMA of that target, or another --arch")
        self.acc_width = 16 if "_32x32x" in self.mfma else 4
        self.global_style = mix.vmem_style == "global"

    def _v(self, width: int = 1) -> int:
        base = self.vreg
        self.vreg = 40 + (self.vreg - 40 + width + 3) // 4 * 4 % 200
        return base

    def new_line(self) -> None:
        self.line += 1 + self.rng.randrange(3)

    def op(self, isa: str, dep: "_Op | None" = None, *, helper: bool = False, barrier: bool = False) -> _Op:
        return _Op(isa, dep, barrier, 0 if helper else self.line)

    def valu(self, dep: "_Op | None" = None) -> _Op:
        d, a, b = self._v(2), self._v(2), self._v(2)
        t = self.rng.choice(_VALU)
        return self.op(t.format(d=d, d1=d + 1, a=a, a1=a + 1, b=b, b1=b + 1), dep, helper=self.rng.random() < 0.3)

    def salu(self) -> _Op:
        d, a, b = self.rng.randrange(16, 90), self.rng.randrange(0, 90), self.rng.randrange(0, 90)
        return self.op(self.rng.choice(_SALU).format(d=d, a=a, b=b), helper=True)

    def smem(self, k: int) -> _Op:
        w = 4 if k % 2 == 0 else 2
        r = 4 + 4 * k
        return self.op(f"s_load_dwordx{w} s[{r}:{r + w - 1}], s[0:1], 0x{16 * k:x}")

    def vmem_load(self, k: int) -> _Op:
        v = self._v(4)
        if self.global_style:
            return self.op(f"global_load_dwordx4 v[{v}:{v + 3}], v[2:3], off offset:{(k % 32) * 256}")
        return self.op(f"buffer_load_dwordx4 v[{v}:{v + 3}], v{8 + k % 4}, s[8:11], 0 offen offset:{(k % 16) * 256}")

    def vmem_store(self, k: int) -> _Op:
        v = self._v(4)
        if self.global_style:
            return self.op(f"global_store_dwordx4 v[2:3], v[{v}:{v + 3}], off offset:{(k % 32) * 256}")
        return self.op(f"buffer_store_dwordx4 v[{v}:{v + 3}], v8, s[12:15], 0 offen offset:{(k % 16) * 256}")

    def lds_write(self, k: int, dep: "_Op | None") -> _Op:
        v = self._v(4)
        return self.op(f"ds_write_b128 v33, v[{v}:{v + 3}] offset:{(k % 8) * 2048}", dep)

    def lds_read(self, k: int) -> _Op:
        v = self._v(4)
        return self.op(f"ds_read_b128 v[{v}:{v + 3}], v35 offset:{(k % 8) * 2048}")

    def bperm(self) -> _Op:
        return self.op(f"ds_bpermute_b32 v{self._v()}, v{self._v()}, v{self._v()}")

    def mfma_op(self, k: int, dep: "_Op | None") -> _Op:
        acc = (k % 4) * self.acc_width
        hi = acc + self.acc_width - 1
        a, b = self._v(4), self._v(4)
        return self.op(f"{self.mfma} a[{acc}:{hi}], v[{a}:{a + 3}], v[{b}:{b + 3}], a[{acc}:{hi}]", dep)


def _spread(rng: random.Random, groups: list[list[_Op]], extras: list[_Op]) -> list[_Op]:
    """Flatten `groups` (kept intact) with the dependency-free `extras` at random places between them."""
    slots: list[list[_Op]] = [[] for _ in range(len(groups) + 1)]
    for e in extras:
        slots[rng.randrange(len(slots))].append(e)
    out: list[_Op] = list(slots[0])
    for g, s in zip(groups, slots[1:]):
        out.extend(g)
        out.extend(s)
    return out


_MIX_FIELDS = ("vmem_loads", "vmem_stores", "lds_reads", "lds_writes", "bpermutes", "smem_loads", "mfma",
               "valu", "salu", "branches", "barriers")


def _generated(mix: InstructionMix, arch: str, sources: SourceSpec, rng: random.Random) -> Code:
    for name in _MIX_FIELDS:
        if getattr(mix, name) < 0:
            raise UsageError(f"instruction mix: {name} must be >= 0")
    if mix.loop_trips < 1:
        raise UsageError("loop_trips must be >= 1")
    if mix.vmem_style not in ("buffer", "global"):
        raise UsageError(f"vmem_style must be 'buffer' or 'global', got {mix.vmem_style!r}")
    if not 0.0 <= mix.branch_taken <= 1.0:
        raise UsageError("branch_taken must be a probability in [0, 1]")
    em = _Emitter(rng, arch, mix)
    looped = mix.loop_trips > 1
    salu_left = max(0, mix.salu - (2 if looped else 0))
    valu_left = mix.valu

    # prologue: scalar loads of the kernel arguments, then a consumer (the compiler's lgkmcnt(0)).
    em.new_line()
    smem = [em.smem(k) for k in range(mix.smem_loads)]
    pro_groups: list[list[_Op]] = [[op] for op in smem]
    if smem:
        pro_groups.append([em.op("s_and_b32 s5, s5, 0xffff", smem[-1], helper=True)])

    # loop body: address math + global loads, LDS staging, barrier, LDS reads feeding MFMAs, shuffles.
    body: list[list[_Op]] = []
    em.new_line()
    loads: list[_Op] = []
    for k in range(mix.vmem_loads):
        ld = em.vmem_load(k)
        loads.append(ld)
        if valu_left > 0:
            valu_left -= 1
            body.append([em.valu(), ld])
        else:
            body.append([ld])
    em.new_line()
    for k in range(mix.lds_writes):
        body.append([em.lds_write(k, loads[k % len(loads)] if loads else None)])
    barriers_left = mix.barriers
    if barriers_left > 0:
        body.append([em.op("s_barrier", barrier=True)])
        barriers_left -= 1
    em.new_line()
    reads = [em.lds_read(k) for k in range(mix.lds_reads)]
    producers = reads or loads
    mf_groups: list[list[_Op]] = [[r] for r in reads] or [[]]
    em.new_line()
    for k in range(mix.mfma):
        mf_groups[k % len(mf_groups)].append(em.mfma_op(k, producers[k % len(producers)] if producers else None))
    body.extend(g for g in mf_groups if g)
    em.new_line()
    for _ in range(mix.bpermutes):
        b = em.bperm()
        if valu_left > 0:
            valu_left -= 1
            body.append([b, em.valu(b)])
        else:
            body.append([b])
    while barriers_left > 0:
        body.insert(rng.randrange(len(body) + 1), [em.op("s_barrier", barrier=True)])
        barriers_left -= 1

    # free ALU work spread through prologue, body and epilogue
    body_valu = valu_left * 3 // 4
    epi_valu = valu_left - body_valu
    body_salu = salu_left * 3 // 4
    pro_salu = salu_left - body_salu
    extras = [em.valu() for _ in range(body_valu)] + [em.salu() for _ in range(body_salu)]
    body_flat = _spread(rng, body, extras)
    for _ in range(pro_salu):
        # before the consumer of the scalar loads, so the wait stays where the compiler puts it
        pro_groups.insert(rng.randrange(max(1, len(pro_groups))), [em.salu()])
    pro_flat = [op for g in pro_groups for op in g]

    # forward branches skip a short run (0..3) of dependency-free ALU ops: the waits stay exact
    consumed = {id(o.dep) for o in body_flat if o.dep is not None}
    for _ in range(mix.branches):
        cands = [i for i in range(len(body_flat)) if _free(body_flat[i], consumed)]
        at = rng.choice(cands) if cands else len(body_flat)
        run = 0
        while at + run < len(body_flat) and run < 3 and _free(body_flat[at + run], consumed):
            run += 1
        body_flat.insert(at, _Op("s_cbranch_execz", branch_to=run, line=em.line))
    if looped:
        body_flat += [_Op("s_add_u32 s40, s40, 1"), _Op("s_cmp_lg_u32 s40, s41"), _Op("s_cbranch_scc1")]

    em.new_line()
    epi = [em.valu() for _ in range(epi_valu)] + [em.vmem_store(k) for k in range(mix.vmem_stores)]
    epi.append(em.op("s_endpgm"))

    # place the waits (the compiler's waitcnt pass); drain at loop entry and before the back edge so
    # every iteration starts from the same counter state.
    final: list[_Op] = []
    state = _Counters()
    state.run(pro_flat, final)
    loop_start = loop_end = -1
    if looped:
        state.drain(final)
        loop_start = len(final)
        state.run(body_flat[:-1], final)
        state.drain(final)
        final.append(body_flat[-1])
        loop_end = len(final) - 1
    else:
        state.run(body_flat, final)
    state.run(epi, final)

    rows: list[Row] = []
    forward: dict[int, tuple[int, float]] = {}
    for i, op in enumerate(final):
        text = op.isa
        if op.branch_to is not None:
            forward[i] = (i + 1 + op.branch_to, mix.branch_taken)
            text = f"s_cbranch_execz {op.branch_to}"
        elif i == loop_end:
            text = f"s_cbranch_scc1 {(0x10000 - (loop_end - loop_start + 1)) & 0xffff}"
        rows.append(Row(text, _source(op, sources, rng), I.classify(text, arch)))
    loop_map = {loop_end: (loop_start, mix.loop_trips)} if looped else {}
    return Code(tuple(rows), loop_map, forward)


def _free(op: _Op, consumed: set[int]) -> bool:
    """True for an ALU op that neither consumes nor produces a tracked result (safe to branch over)."""
    kind = I.classify(op.isa, "gfx950").kind
    return op.dep is None and op.branch_to is None and kind in ("valu", "salu") and id(op) not in consumed


class _Counters:
    """Static vm/lgkm lists in program order, used to place s_waitcnt with the right values."""

    def __init__(self) -> None:
        self.vm: list[_Op] = []
        self.lgkm: list[_Op] = []
        self.smem_pending = False

    def drain(self, out: list[_Op]) -> None:
        need = {}
        if self.vm:
            need["vm"] = 0
        if self.lgkm:
            need["lgkm"] = 0
        self._emit(need, out)

    def _emit(self, need: dict[str, int], out: list[_Op]) -> None:
        if not need:
            return
        parts = []
        if "vm" in need:
            n = need["vm"]
            del self.vm[:max(0, len(self.vm) - n)]
            parts.append(f"vmcnt({n})")
        if "lgkm" in need:
            n = need["lgkm"]
            del self.lgkm[:max(0, len(self.lgkm) - n)]
            if n == 0:
                self.smem_pending = False
            parts.append(f"lgkmcnt({n})")
        out.append(_Op("s_waitcnt " + " ".join(parts), line=out[-1].line if out else 0))

    def run(self, ops: list[_Op], out: list[_Op]) -> None:
        for op in ops:
            need: dict[str, int] = {}
            if op.dep is not None:
                if op.dep in self.vm:
                    need["vm"] = len(self.vm) - 1 - self.vm.index(op.dep)
                if op.dep in self.lgkm:
                    need["lgkm"] = 0 if self.smem_pending else len(self.lgkm) - 1 - self.lgkm.index(op.dep)
            if op.barrier and self.lgkm:
                need["lgkm"] = 0
            cnt = I.counters(mnemonic_of(op.isa))
            # keep below the hardware counter maxima (HARDWARE.md §3)
            if "vm" in cnt and len(self.vm) >= I.VMCNT_MAX:
                need["vm"] = min(need.get("vm", I.VMCNT_MAX - 1), I.VMCNT_MAX - 1)
            if "lgkm" in cnt and len(self.lgkm) >= I.LGKMCNT_MAX:
                need["lgkm"] = min(need.get("lgkm", I.LGKMCNT_MAX - 1), I.LGKMCNT_MAX - 1)
            self._emit(need, out)
            out.append(op)
            for c in cnt:
                (self.vm if c == "vm" else self.lgkm).append(op)
            if mnemonic_of(op.isa).startswith(("s_load", "s_buffer_load")):
                self.smem_pending = True


def _source(op: _Op, sources: SourceSpec, rng: random.Random) -> str:
    if not sources.debug_info or not sources.files:
        return ""
    kernel = sources.files[0]
    helper = sources.files[1] if len(sources.files) > 1 else kernel
    if op.line == 0:
        return f"{helper}:{44 + rng.randrange(3) * 50}"
    if sources.inline_chains and rng.random() < 0.2:
        return f"{helper}:{100 + rng.randrange(200)} -> {kernel}:{op.line}"
    return f"{kernel}:{op.line}"
