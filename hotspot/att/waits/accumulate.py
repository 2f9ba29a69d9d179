"""Mergeable integer bookkeeping of wait blame over any set of waves (what workers return)."""

from __future__ import annotations


from collections.abc import Sequence

from hotspot.att.waits.waitcnt_rules import NO_PRODUCER, LineTables
from hotspot.att.waits.replay import align_edges, edge_keys, reconstruct
from hotspot.capture import WaitcntEdges
from hotspot.record import record


@record(frozen=False)
class BlameAccumulator:
    """Mergeable integer bookkeeping of wait blame over any set of waves.

    blame[(wait line, producer line, k)] = Σ stall of wait instances that had k producers; the
    producer's exact share is Σ_k blame / k (a Fraction), so conservation is exact.
    """

    blame: dict[tuple[int, int, int], int]
    wait_stall: dict[int, int]
    wait_hits: dict[int, int]
    dist_cycles: dict[tuple[int, int], dict[int, int]]  # histogram of issue-to-wait cycles
    dist_instructions: dict[tuple[int, int], dict[int, int]]  # histogram of instructions between
    waves_edges: int = 0
    waves_static: int = 0
    edge_entries: int = 0
    edge_entries_reconstructed: int = 0  # edges the static reconstruction reproduced exactly
    out_of_order_waits: int = 0

    @classmethod
    def empty(cls) -> "BlameAccumulator":
        return cls({}, {}, {}, {}, {})

    def add_wave(self, ins: Sequence[list[int]], edges: WaitcntEdges, tables: LineTables) -> None:
        entries, positions, ooo = reconstruct([rec[4] for rec in ins], tables)
        self.add_reconstructed(ins, edge_keys(edges) if edges else None, entries, positions, ooo)

    def add_reconstructed(self, ins: Sequence[list[int]],
                          ekeys: list[tuple[int, tuple[int, ...]]] | None,
                          entries: list[tuple[int, list[int]]], positions: list[int], ooo: int
                          ) -> None:
        """add_wave given the wave's reconstruction (shared by waves of one executed sequence)
        and its decoder edges as keys (None: the wave has no edges)."""
        self.out_of_order_waits += ooo
        if ekeys is not None:
            entries, matched = align_edges(ins, ekeys, entries)
            self.waves_edges += 1
            self.edge_entries += len(ekeys)
            self.edge_entries_reconstructed += matched
        else:
            self.waves_static += 1
        blame_wave(ins, entries, positions, self)

    def merge(self, other: "BlameAccumulator") -> None:
        for key, v in other.blame.items():
            self.blame[key] = self.blame.get(key, 0) + v
        for line, v in other.wait_stall.items():
            self.wait_stall[line] = self.wait_stall.get(line, 0) + v
        for line, v in other.wait_hits.items():
            self.wait_hits[line] = self.wait_hits.get(line, 0) + v
        for mine, theirs in ((self.dist_cycles, other.dist_cycles),
                             (self.dist_instructions, other.dist_instructions)):
            for pair, hist in theirs.items():
                h = mine.setdefault(pair, {})
                for value, count in hist.items():
                    h[value] = h.get(value, 0) + count
        self.waves_edges += other.waves_edges
        self.waves_static += other.waves_static
        self.edge_entries += other.edge_entries
        self.edge_entries_reconstructed += other.edge_entries_reconstructed
        self.out_of_order_waits += other.out_of_order_waits


def blame_wave(ins: Sequence[list[int]], entries: list[tuple[int, list[int]]], positions: list[int],
               acc: BlameAccumulator) -> None:
    """Split each wait instance's stall over its producers into `acc` (integers only)."""
    producers: dict[int, list[int]] = {}
    for w, listed in entries:
        got = producers.get(w)
        if got is None:
            producers[w] = list(listed)
        else:
            got.extend(listed)
    blame, wait_stall, wait_hits = acc.blame, acc.wait_stall, acc.wait_hits
    dcyc, dins = acc.dist_cycles, acc.dist_instructions
    for w in positions:
        rec = ins[w]
        wline, stall, wtime = rec[4], rec[2], rec[0]
        wait_stall[wline] = wait_stall.get(wline, 0) + stall
        wait_hits[wline] = wait_hits.get(wline, 0) + 1
        prods = producers.get(w)
        if not prods:
            key = (wline, NO_PRODUCER, 1)
            blame[key] = blame.get(key, 0) + stall
            continue
        k = len(prods)
        for p in prods:
            prec = ins[p]
            pline = prec[4]
            key = (wline, pline, k)
            blame[key] = blame.get(key, 0) + stall
            dkey = (wline, pline)
            hc = dcyc.get(dkey)
            if hc is None:
                hc = dcyc[dkey] = {}
                dins[dkey] = {}
            c = wtime - prec[0] - prec[2]
            hc[c] = hc.get(c, 0) + 1
            hi = dins[dkey]
            d = w - p - 1
            hi[d] = hi.get(d, 0) + 1
