"""The speed targets of issue 18, checked against the measurements of benchkit/sequence.py and the
generated cases of bench.py (docs/benchmark.md)."""

from __future__ import annotations

from benchkit.measure import Spread
from benchkit.sequence import Chain
from benchkit.targets import BIG_MB, Case, Target, _mb, _s, _skip, _verdict

# --- targets (issue 18); each is a promise to users, not a tuning knob ---
WAVE_CASE_VS_BASELINE = 2.5     # fresh 2,000-wave / ~32 MB analysis vs the code.json-only pass
SMALL_VS_BASELINE = 2.0         # fresh small dir (vec_add) vs the same pass
SMALL_MAX_BYTES = 5_000_000     # wave JSON of a "small" given dir
REPEAT_VS_BASELINE = 0.5        # any command repeated on an unchanged capture
SEQUENCE_VS_FRESH = 1.6         # analyze -> plan -> report -> diff vs one fresh analyze
BIG_MIN_BPS_PER_CPU = 200e6     # 1 GB: wave bytes per CPU second
BIG_MAX_WALL_NS = 6_000_000_000  # ... on 2 cores
BIG_MAX_RSS = 300 * 1024 * 1024
HELP_MAX_NS = 100_000_000
ANALYZE_HELP_MAX_NS = 80_000_000


def evaluate(chains: list[tuple[Case, Chain]], sized: list[Case], help_runs: dict[str, Spread]
             ) -> list[Target]:
    out: list[Target] = []
    for case, ch in chains:
        if case.kind == "waves":
            limit, what = WAVE_CASE_VS_BASELINE, f"fresh {case.label} analysis"
        elif case.kind == "dir" and case.wave_bytes <= SMALL_MAX_BYTES:
            limit, what = SMALL_VS_BASELINE, f"fresh analysis of {case.label} (small)"
        else:
            limit, what = None, ""
        if limit is not None:
            out.append(_ratio_target(f"fresh_vs_baseline:{case.label}",
                                     f"{what} <= {limit}x the code.json-only pass", ch.fresh, ch.baseline,
                                     limit))
        worst = max(ch.repeats.items(), key=lambda kv: kv[1].median_wall_ns)
        goal = f"any command repeated on {case.label} <= {REPEAT_VS_BASELINE}x the code.json-only pass"
        t = _ratio_target(f"repeat_vs_baseline:{case.label}", goal, worst[1], ch.baseline, REPEAT_VS_BASELINE)
        out.append(Target(t.name, t.goal, t.verdict, f"slowest repeat `{worst[0]}`: {t.measured}", t.value,
                          t.limit, t.unit))
        out.append(_ratio_target(f"sequence_vs_fresh:{case.label}",
                                 f"analyze -> plan -> report -> diff on {case.label} <= {SEQUENCE_VS_FRESH}x one "
                                 "fresh analyze", ch.sequence, ch.fresh, SEQUENCE_VS_FRESH))

    big = next((c for c in sized if c.size_mb == BIG_MB and c.ok), None)
    goals = (("big_bytes_per_cpu_s", f"{BIG_MB} MB: >= {BIG_MIN_BPS_PER_CPU / 1e6:.0f} MB per CPU second"),
             ("big_wall_2_cores", f"{BIG_MB} MB: <= {_s(BIG_MAX_WALL_NS)} wall on 2 cores"),
             ("big_rss_18", f"{BIG_MB} MB: RSS <= {BIG_MAX_RSS / 2**20:.0f} MB"))
    if big is None:
        out += [_skip(n, g, 0, "", None, f"no {BIG_MB} MB case (add it to --sizes)") for n, g in goals]
    else:
        h = big.hotspot
        bps = big.wave_bytes / (h.median_cpu_ns / 1e9) if h.median_cpu_ns else 0.0
        out.append(Target(goals[0][0], goals[0][1], _verdict(bps >= BIG_MIN_BPS_PER_CPU),
                          f"{bps / 1e6:.0f} MB/s ({_mb(big.wave_bytes)} in {_s(h.median_cpu_ns)} CPU)", bps,
                          BIG_MIN_BPS_PER_CPU, "bytes/s"))
        out.append(Target(goals[1][0], goals[1][1], _verdict(h.median_wall_ns <= BIG_MAX_WALL_NS),
                          f"{_s(h.median_wall_ns)} median", h.median_wall_ns, BIG_MAX_WALL_NS, "ns"))
        rss = max(h.peak_rss_bytes, h.tree_rss_bytes)
        out.append(Target(goals[2][0], goals[2][1], _verdict(rss <= BIG_MAX_RSS), f"{rss / 2**20:.0f} MiB",
                          rss, BIG_MAX_RSS, "bytes"))

    for name, key, limit in (("help_18", "--help", HELP_MAX_NS),
                             ("analyze_help", "analyze --help", ANALYZE_HELP_MAX_NS)):
        # judged on the first call (cache off): a help that is fast only when replayed is not fast
        goal = f"hotspot {key} <= {_s(limit)} (cache off)"
        cold, warm = help_runs.get(f"{key} (cold)"), help_runs.get(key)
        if cold is None or cold.failed:
            out.append(_skip(name, goal, limit, "ns", None, cold.failed if cold else "not run"))
            continue
        v = cold.median_wall_ns
        again = f"; with a warm cache {_s(warm.median_wall_ns)}" if warm and not warm.failed else ""
        out.append(Target(name, goal, _verdict(v <= limit), f"{_s(v)} median of {cold.runs}{again}", v,
                          limit, "ns"))
    return out


def _ratio_target(name: str, goal: str, a: Spread, b: Spread, limit: float) -> Target:
    if a.failed or b.failed or not b.median_wall_ns:
        return Target(name, goal, "SKIP", f"a command failed: {a.failed or b.failed}", None, limit, "ratio")
    r = a.median_wall_ns / b.median_wall_ns
    return Target(name, goal, _verdict(r <= limit),
                  f"{r:.2f}x ({_s(a.median_wall_ns)} vs {_s(b.median_wall_ns)})", r, limit, "ratio")
