"""Text/markdown sections of `analyze` built from the wave pass: blamed loads, waits and their
producers, lgkm breakdown, wave states, loops, barriers (formatting only)."""

from __future__ import annotations

from hotspot.att.model import DispatchAnalysis
from hotspot.att.states import WaveStates
from hotspot.att.waits.reduce import Attribution, WaitBlame
from hotspot.render.tables import BAR_HEADER, bar, heading, num, pct, table

PRODUCERS_SHOWN = 3  # per wait in the text view (JSON has all)


def _src(text: str) -> str:
    """A source location's file name and line (the table fits it to its column)."""
    return text.rsplit("/", 1)[-1] if text else ""


def _dist(value: float | None) -> str:
    return "" if value is None else num(value)


def wave_sections(a: DispatchAnalysis, markdown: bool) -> list[tuple[str, str]]:
    """(section name, text) of each table the wave pass gave (names: the analyze spec's)."""
    out: list[tuple[str, str]] = []
    attr = getattr(a, "attribution", None)
    if a.blamed_lines:
        rows = [[_src(b.label), num(round(b.blamed_stall)),
                 pct(100 * b.share), ", ".join(b.categories), _dist(b.median_distance_cycles),
                 _dist(b.median_distance_instructions)] for b in a.blamed_lines]
        out.append(("blamed-loads", heading(f"Blamed loads: what the waits wait for ({len(rows)})", markdown) + "\n"
                   + table(rows, ["load", "blamed stall", "% of wait", "category", "dist cyc",
                                  "dist instr"], markdown)
                   + ("" if markdown else "\nload: source line or #row; dist: median distance "
                      "from the load to its wait, in cycles and in instructions")))
    if a.waits:
        out.append(("waits", _waits(a.waits, attr, markdown)))
    bd = a.lgkm_breakdown
    if bd is not None and bd.stall:
        rows = [[c.producer_class, num(round(c.stall)), pct(100 * c.share), bar(c.share)]
                for c in bd.classes if c.stall]
        for name, value in (("vmem (mixed waits)", bd.vmem_stall),
                            ("nothing outstanding", bd.no_producer_stall)):
            if value:
                rows.append([name, num(round(value)), pct(100 * value / bd.stall),
                             bar(value / bd.stall)])
        out.append(("lgkm", heading(f"lgkmcnt wait stall by producer ({num(bd.stall)} cycles)", markdown)
                    + "\n" + table(rows, ["producer", "stall", "share", BAR_HEADER], markdown)))
    ws = a.wave_states
    if ws is not None:
        out.append(("wave-states", _states(ws, markdown)))
    if a.loops:
        rows = []
        for lp in a.loops:
            hot = lp.hot_wait
            hot_text = ""
            if hot:
                hot_text = f"#{hot.line_number} {hot.isa} ({pct(100 * hot.share_of_loop, 0)})"
                if hot.top_producer:
                    hot_text += " <- " + " ".join(hot.top_producer.split()[:2])
            rows.append([f"#{lp.first_line_number}-#{lp.last_line_number}",
                         _src(lp.source_range), num(lp.iterations), num(lp.iterations_per_wave),
                         num(lp.stall), pct(100 * lp.share), hot_text])
        out.append(("loops", heading(f"Loops ({len(rows)})", markdown) + "\n" + table(
            rows, ["rows", "source", "iterations", "per wave", "stall", "share", "hot wait"],
            markdown)))
    if a.barriers:
        rows = [[str(b.line_number), _src(b.source), num(b.instances), num(b.stall), num(b.groups),
                 _dist(b.median_spread_cycles), _dist(b.max_spread_cycles)] for b in a.barriers]
        out.append(("barriers", heading(f"Barriers: arrival spread first -> last wave ({len(rows)})", markdown)
                    + "\n" + table(rows, ["#", "source", "instances", "stall", "groups",
                                          "median spread", "max spread"], markdown)))
    return out


def _waits(waits: list[WaitBlame], attr: Attribution | None, markdown: bool) -> str:
    rows = []
    for w in waits:
        first = True
        for p in w.producers[:PRODUCERS_SHOWN]:
            prod = f"#{p.line_number} {p.isa}" if p.line_number is not None else p.isa
            rows.append([f"#{w.line_number} {w.isa}" if first else "",
                         num(w.stall) if first else "", prod, pct(100 * p.share, 0),
                         _dist(p.median_distance_cycles), _dist(p.median_distance_instructions)])
            first = False
        rest = len(w.producers) - PRODUCERS_SHOWN
        if rest > 0:
            rows.append(["", "", f"(+{rest} more producers of #{w.line_number})", "", "", ""])
        if not w.producers:
            rows.append([f"#{w.line_number} {w.isa}", num(w.stall), "", "", "", ""])
    title = f"Waits and their producers ({len(waits)})"
    text = heading(title, markdown) + "\n" + table(
        rows, ["s_waitcnt", "stall", "producer", "share", "dist (cyc)", "(instrs)"], markdown)
    if attr is not None:
        if attr.waves_with_edges and not attr.waves_reconstructed:
            how = "decoder waitcnt edges"
        elif attr.waves_reconstructed and not attr.waves_with_edges:
            how = "static vm/lgkm reconstruction (no waitcnt edges in the wave files)"
        else:
            how = (f"decoder edges on {attr.waves_with_edges} waves, reconstruction on "
                   f"{attr.waves_reconstructed}")
        note = f"producers from {how}; stall split equally over a wait's producers"
        if attr.reconstruction_agreement is not None:
            note += f"; reconstruction agrees with {pct(100 * attr.reconstruction_agreement)} of edges"
        if attr.sampled:
            note += f"; {attr.waves_read} of {attr.waves_total} waves read"
        text += "\n" + note
    return text


def _states(ws: WaveStates, markdown: bool) -> str:
    total = sum(ws.states.values()) or 1
    summary = ", ".join(f"{k} {pct(100 * v / total)}" for k, v in ws.states.items() if v)
    parts = [heading("Wave states", markdown),
             f"{num(ws.waves_read)} waves" + (f" of {num(ws.waves_total)}" if ws.waves_read <
                                               ws.waves_total else "")
             + f", {num(ws.cycles)} wave-cycles: {summary}"]
    src = ws.lines or ws.instructions
    if src:
        rows = [[_src(r.label), num(r.exec), num(r.wait),
                 num(r.stall), num(r.idle)] for r in src]
        parts.append(table(rows, ["source line" if ws.lines else "instruction", "exec", "wait",
                                  "stall", "idle"], markdown))
    return "\n".join(parts)
