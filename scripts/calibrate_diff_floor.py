"""Recompute hotspot.diff.noise.CAPTURE_NOISE_SD from the replicate fixture (docs/cli/diff.md).

1. The floor: each big-configuration capture of ../shared/corpus/att/gfx950/flash_attn_replicates
   (one binary, 32 traced waves each), its total stall and executed instructions, and the sample sd
   of log(stall / executed instructions) between them: what replicate dispatches measure
   (hotspot/diff/api.py `_replicate_sd`). These are the rows of noise.FLOOR_CAPTURES; the script
   says whether the table still holds them.
2. A check that the floor is not too narrow: for every within-configuration pair and every tested
   row, L = observed log ratio of cycles per wave, s = its bootstrap sd from the workgroups' spread
   alone (floor 0). The smallest σ for which 95% of these comparisons fall inside their 95%
   interval, |L| <= 1.96 * sqrt(s² + 2σ²) (each capture of a pair carries one factor of variance
   σ²), is the part of the capture noise the spread does not show; the floor must not be under it.
   The method-of-moments estimate mean((L² − s²) / 2) is printed beside it.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

from hotspot.diff.api import compare, load_side
from hotspot.diff.noise import CAPTURE_NOISE_SD, FLOOR_CAPTURES

FIXTURE = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "att" / "gfx950" / \
    "flash_attn_replicates"


def main() -> int:
    if not FIXTURE.is_dir():
        print(f"{FIXTURE}: not found", file=sys.stderr)
        return 3
    rows = []
    for d in sorted(p for p in (FIXTURE / "big").iterdir() if p.is_dir()):
        x = load_side(d, None, None, []).analyses[0]
        rows.append((d.name, round(x.totals.stall), x.totals.hit))
        print(f"floor row: {rows[-1]}")
    logs = [math.log(stall / hits) for _name, stall, hits in rows]
    mean = sum(logs) / len(logs)
    floor = math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))
    same = tuple(rows) == FLOOR_CAPTURES
    print(f"floor: sd of log(stall / executed instructions) over {len(rows)} captures = {floor:.4f} "
          f"(noise.CAPTURE_NOISE_SD {CAPTURE_NOISE_SD:.4f}; FLOOR_CAPTURES "
          f"{'holds these rows' if same else 'differs: update it'})")
    terms = []
    for size in ("big", "small"):
        dirs = sorted(p for p in (FIXTURE / size).iterdir() if p.is_dir())
        for b, a in itertools.combinations(dirs, 2):
            warnings: list[str] = []
            result = compare(load_side(b, None, None, warnings), load_side(a, None, None, warnings),
                             warnings, floor_sd=0.0)
            for r in result.rows:
                if r.tested and r.ci_pct and r.before > 0 and r.after > 0:
                    L = math.log(r.after / r.before)  # per wave (same work, same code)
                    # percentile interval half-width / 1.96 ≈ the bootstrap sd of L
                    sd = (math.log1p(r.ci_pct[1] / 100) - math.log1p(r.ci_pct[0] / 100)) / (2 * 1.96)
                    terms.append((L, sd))
            change = result.summary.latency_change_pct
            head = next((r for r in result.rows if r.key == "total:latency"), None)
            print(f"{size}: {b.name} vs {a.name}: latency per wave "
                  + (f"{change:+.1f}%" if change is not None else
                     f"not tested ({head.not_tested if head else 'no latency row'})"))
    moments = math.sqrt(max(0.0, sum((L * L - s * s) / 2 for L, s in terms) / len(terms)))

    def coverage(sigma: float) -> float:
        return sum(abs(L) <= 1.96 * math.sqrt(s * s + 2 * sigma * sigma) for L, s in terms) / len(terms)

    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if coverage(mid) >= 0.95 else (mid, hi)
    print(f"{len(terms)} row comparisons; method of moments {moments:.4f}; "
          f"coverage at 0: {coverage(0.0):.1%}")
    print(f"capture noise beyond the spread: {hi:.4f} (95% of replicate rows inside their 95% "
          f"interval); the floor {'covers' if floor >= hi else 'is UNDER'} it")
    return 0 if same and floor >= hi else 1


if __name__ == "__main__":
    sys.exit(main())
