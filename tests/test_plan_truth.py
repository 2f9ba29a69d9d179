"""The plan scored against the expert truth table (tests/truth/*.yaml, scored by scripts/plan_truth.py).

Per entry: the scorer runs and reports one row (corpus entries skip when ../shared/corpus is absent).
Over all: item #1 is right on at least 90% of the real captures (corpus and the bundled example),
and on every synthetic entry (each plants one pattern); the table is printed on failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import plan_truth as pt  # noqa: E402

ENTRIES = pt.load_entries()

# One worker: the `scores` fixture runs every entry once per module, not once per worker.
pytestmark = pytest.mark.xdist_group("plan-truth")


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory, _shared_cache_home: Path) -> dict[str, pt.Score]:
    """Every entry scored once; the corpus captures' analyses through the run's shared result
    cache (tests/conftest.py shared_analyses: other modules analyse the same captures)."""
    work = tmp_path_factory.mktemp("truth")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(_shared_cache_home))
        mp.setenv("HOTSPOT_CACHE", "on")
        return {e.id: pt.run_entry(e, work) for e in ENTRIES}


def test_every_truth_file_follows_the_format() -> None:
    assert ENTRIES, "no tests/truth/*.yaml"
    assert len({e.id for e in ENTRIES}) == len(ENTRIES)
    for e in ENTRIES:
        assert e.path.stem == e.id, e.path
        assert e.trust in pt.TRUST_LEVELS
        assert e.item1 is None or e.item1["accept"], e.id


@pytest.mark.parametrize("entry_id", [e.id for e in ENTRIES])
def test_entry_runs(scores: dict[str, pt.Score], entry_id: str) -> None:
    s = scores[entry_id]
    if s.skipped:
        pytest.skip(s.skipped)
    assert s.error is None, f"{entry_id}: {s.error}"


def test_scoring_rules() -> None:
    """The scorer itself, on hand-made plans: item #1 skips capture items; rows match a site."""
    entry = pt.Entry("x", "synth:x", None, "ok",
                     {"accept": ["short-load-distance"], "rows": [19]}, [], Path("x.yaml"))
    capture = {"id": "source-collapse", "kind": "capture", "location": {"line_number": 3},
               "estimate": {"high_pct": None}, "sites": []}
    item = {"id": "short-load-distance", "kind": "code", "location": {"line_number": 17},
            "estimate": {"high_pct": 10.7}, "sites": [{"wait_row": 19, "producer_rows": [17]}]}
    assert pt.score_plan(entry, {"plan": [capture, item], "trust": {"level": "ok"}}).item1_pass
    moved = dict(item, sites=[{"wait_row": 21, "producer_rows": [17]}])
    assert not pt.score_plan(entry, {"plan": [capture, moved], "trust": {"level": "ok"}}).item1_pass
    none = pt.Entry("y", "synth:y", None, "ok", None, [], Path("y.yaml"))
    withheld = dict(item, estimate={"high_pct": None})
    assert pt.score_plan(none, {"plan": [capture, withheld], "trust": {"level": "ok"}}).item1_pass
    assert not pt.score_plan(none, {"plan": [item], "trust": {"level": "limited"}}).item1_pass


def test_item_one_scores(scores: dict[str, pt.Score]) -> None:
    ran = [s for s in scores.values() if not s.skipped]
    t = pt.totals(ran)
    report = "\n" + pt.table(list(scores.values()))
    if t.captures:
        assert t.capture_score is not None and t.capture_score >= pt.REQUIRED_SCORE, report
    assert t.synthetic_pass == t.synthetic, report
