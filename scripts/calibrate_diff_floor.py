"""Derive hotspot.diff.noise.CAPTURE_NOISE_SD from the replicate fixture (docs/cli/diff.md).

For every within-configuration pair of ../shared/corpus/att/gfx950/flash_attn_replicates and every
tested row: L = observed log ratio of cycles per execution, s = its bootstrap sd from the wave
spread alone (floor 0). σ is the smallest value for which 95% of these replicate comparisons fall
inside their 95% interval, |L| <= 1.96 * sqrt(s² + 2σ²) (each capture of a pair carries one factor
of variance σ²): the intervals then have their nominal coverage on unchanged code. The
method-of-moments estimate mean((L² − s²) / 2) is printed beside it: it is smaller, because rows
move between captures with heavier tails than a normal factor has.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

from hotspot.diff.api import compare, load_side

FIXTURE = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "att" / "gfx950" / \
    "flash_attn_replicates"


def main() -> int:
    if not FIXTURE.is_dir():
        print(f"{FIXTURE}: not found", file=sys.stderr)
        return 3
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
            print(f"{size}: {b.name} vs {a.name}: latency per wave {result.summary.latency_change_pct:+.1f}%")
    moments = math.sqrt(max(0.0, sum((L * L - s * s) / 2 for L, s in terms) / len(terms)))

    def coverage(sigma: float) -> float:
        return sum(abs(L) <= 1.96 * math.sqrt(s * s + 2 * sigma * sigma) for L, s in terms) / len(terms)

    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if coverage(mid) >= 0.95 else (mid, hi)
    print(f"{len(terms)} row comparisons; method of moments {moments:.4f}; "
          f"coverage at 0: {coverage(0.0):.1%}")
    print(f"CAPTURE_NOISE_SD = {hi:.4f} (95% of replicate rows inside their 95% interval)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
