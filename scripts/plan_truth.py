#!/usr/bin/env python3
"""Score the plan against the expert truth table (tests/truth/<id>.yaml) and print the table.

    scripts/plan_truth.py            # the table and the scores; exit 0
    scripts/plan_truth.py --check    # exit 1 when the capture score is below 90% or a synthetic entry fails
    scripts/plan_truth.py --only vec-add --verbose

Each entry runs the same use-case `hotspot plan --format json` runs (hotspot.plan.entry_point.analyze).
Item #1 is the first plan item that is not a capture item (capture items are trust, shown first).
It passes when the entry expects no item and no item claims a gain (estimate withheld, absent or
0%), or when its rule id is one of `accept` and, if `rows` is not empty, one of those code rows is
the item's location or a site's wait row or producer row. Trust passes when the level is equal.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import util as import_util
from pathlib import Path
from typing import Any

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TRUTH_DIR = PROJECT_ROOT / "tests" / "truth"
CORPUS = (PROJECT_ROOT / ".." / "shared" / "corpus").resolve()
REQUIRED_SCORE = 0.90
FIELDS = ("id", "capture", "trust", "item1", "not_item1")
TRUST_LEVELS = ("ok", "limited", "unrepresentative")


class TruthError(ValueError):
    """A truth file that does not follow the fixed format."""


@dataclass
class Entry:
    id: str
    capture: str
    meta: str | None
    trust: str
    item1: dict[str, Any] | None
    not_item1: list[str]
    path: Path

    @property
    def synthetic(self) -> bool:
        return self.capture.startswith("synth:")

    @property
    def expected(self) -> str:
        if self.item1 is None:
            return "(no item)"
        rows = self.item1.get("rows") or []
        return "|".join(self.item1.get("accept") or []) + (f" @{','.join(map(str, rows[:4]))}"
                                                             + ("…" if len(rows) > 4 else "") if rows else "")


@dataclass
class Score:
    entry: Entry
    skipped: str | None = None      # why the entry could not run (corpus absent)
    error: str | None = None        # the plan failed on it
    got: str = ""
    item1_pass: bool = False
    trust_got: str = ""
    trust_pass: bool = False
    notes: list[str] = field(default_factory=list)


def load_entries(truth_dir: Path = TRUTH_DIR) -> list[Entry]:
    out = []
    for path in sorted(truth_dir.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if not isinstance(doc, dict):
            raise TruthError(f"{path}: expected a mapping")
        missing = [f for f in FIELDS if f not in doc]
        if missing:
            raise TruthError(f"{path}: missing field(s) {', '.join(missing)}")
        if doc["trust"] not in TRUST_LEVELS:
            raise TruthError(f"{path}: trust {doc['trust']!r} is not one of {', '.join(TRUST_LEVELS)}")
        item1 = doc["item1"]
        if item1 is not None and (not isinstance(item1, dict) or not isinstance(item1.get("accept"), list)):
            raise TruthError(f"{path}: item1 must be null or a mapping with an accept list")
        out.append(Entry(str(doc["id"]), str(doc["capture"]), doc.get("meta"), doc["trust"], item1,
                         list(doc.get("not_item1") or []), path))
    return out


def _synth_module(truth_dir: Path):
    spec = import_util.spec_from_file_location("truth_synth", truth_dir / "synth.py")
    if spec is None or spec.loader is None:
        raise TruthError(f"{truth_dir / 'synth.py'}: cannot be loaded")
    module = import_util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resolve(form: str, work: Path, truth_dir: Path = TRUTH_DIR) -> Path | str:
    """A capture/meta form as a path, or the reason it is not available (a skip)."""
    if form.startswith("corpus:"):
        path = CORPUS / form.split(":", 1)[1]
        return path if path.exists() else f"corpus path {path} not found (../shared/corpus is absent)"
    if form == "example":
        from hotspot.examples import example_dispatch_dir

        return example_dispatch_dir()
    if form.startswith("synth:"):
        name = form.split(":", 1)[1]
        make = getattr(_synth_module(truth_dir), f"make_{name.replace('-', '_')}", None)
        if make is None:
            raise TruthError(f"{truth_dir / 'synth.py'}: no make_{name}")
        # nested so that the side-file search (up to 3 folders above the dispatch dir, and their
        # subfolders) never reaches another entry's files or whatever else lies in the temp folder
        out = work / name / "capture" / "run" / "out"
        out.mkdir(parents=True, exist_ok=True)
        return Path(make(out))
    raise TruthError(f"capture form {form!r}: expected corpus:<path>, example or synth:<name>")


def plan_data(path: Path, meta: Path | None) -> dict[str, Any]:
    """What `hotspot plan PATH [--meta META] --format json` puts in `data`, in process."""
    from hotspot.att.model import PLAN_ALONE, AnalyzeOptions
    from hotspot.plan.entry_point import analyze

    opts = AnalyzeOptions(topk=0, meta=(str(meta),) if meta else (), plan=PLAN_ALONE)
    return analyze(path, opts).plain_data()


def item_one(plan: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((i for i in plan if i.get("kind") != "capture"), None)


def _claims_gain(item: dict[str, Any]) -> bool:
    high = (item.get("estimate") or {}).get("high_pct")
    return isinstance(high, (int, float)) and high > 0


def item_rows(item: dict[str, Any]) -> set[int]:
    rows = {item["location"].get("line_number")}
    for s in item.get("sites") or []:
        rows.add(s.get("wait_row"))
        rows.update(s.get("producer_rows") or [])
    return {r for r in rows if isinstance(r, int)}


def score_plan(entry: Entry, data: dict[str, Any]) -> Score:
    sc = Score(entry)
    plan = data.get("plan") or []
    first = item_one(plan)
    if entry.item1 is None:
        claimed = [i for i in plan if i.get("kind") != "capture" and _claims_gain(i)]
        sc.got = f"{claimed[0]['id']} (claims {claimed[0]['estimate']['high_pct']:g}%)" if claimed else \
            (f"{first['id']} (no gain claimed)" if first else "(no item)")
        sc.item1_pass = not claimed
    elif first is None:
        sc.got = "(no item)"
    else:
        accept = entry.item1.get("accept") or []
        rows = set(entry.item1.get("rows") or [])
        hit = sorted(rows & item_rows(first))
        where = first["location"].get("line_number")
        sc.got = first["id"] + (f" @{where}" if where is not None else "")
        sc.item1_pass = first["id"] in accept and (not rows or bool(hit))
        if first["id"] in accept and rows and not hit:
            sc.notes.append("right rule, none of the expected rows")
    sc.trust_got = str((data.get("trust") or {}).get("level"))
    sc.trust_pass = sc.trust_got == entry.trust
    return sc


def run_entry(entry: Entry, work: Path) -> Score:
    try:
        path = resolve(entry.capture, work)
        meta = resolve(entry.meta, work) if entry.meta else None
    except TruthError as e:
        return Score(entry, error=str(e))
    for p in (path, meta):
        if isinstance(p, str):
            return Score(entry, skipped=p)
    try:
        data = plan_data(path, meta)  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001 - a failing entry is a row of the table, not a crash
        return Score(entry, error=f"{type(e).__name__}: {e}")
    return score_plan(entry, data)


def run_all(entries: list[Entry]) -> Iterator[Score]:
    with tempfile.TemporaryDirectory(prefix="plan-truth-") as tmp:
        for e in entries:
            yield run_entry(e, Path(tmp))


@dataclass
class Totals:
    captures: int = 0
    captures_pass: int = 0
    synthetic: int = 0
    synthetic_pass: int = 0
    trust: int = 0
    trust_pass: int = 0
    skipped: int = 0

    @property
    def capture_score(self) -> float | None:
        return self.captures_pass / self.captures if self.captures else None

    def ok(self) -> bool:
        score = self.capture_score
        return (score is None or score >= REQUIRED_SCORE) and self.synthetic_pass == self.synthetic


def totals(scores: list[Score]) -> Totals:
    t = Totals()
    for s in scores:
        if s.skipped:
            t.skipped += 1
            continue
        if s.entry.synthetic:
            t.synthetic += 1
            t.synthetic_pass += s.item1_pass
        else:
            t.captures += 1
            t.captures_pass += s.item1_pass
        t.trust += 1
        t.trust_pass += s.trust_pass
    return t


def _mark(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def table(scores: list[Score]) -> str:
    rows = [("id", "expected item #1", "got", "item#1", "trust exp/got", "trust")]
    for s in scores:
        if s.skipped or s.error:
            rows.append((s.entry.id, s.entry.expected, f"skipped: {s.skipped}" if s.skipped else
                         f"error: {s.error}", "skip" if s.skipped else "FAIL", s.entry.trust, ""))
            continue
        rows.append((s.entry.id, s.entry.expected, s.got + (f" ({'; '.join(s.notes)})" if s.notes else ""),
                     _mark(s.item1_pass), f"{s.entry.trust}/{s.trust_got}", _mark(s.trust_pass)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    widths = [min(w, 48) for w in widths]
    lines = []
    for r in rows:
        lines.append("  ".join((c if len(c) <= widths[i] else c[:widths[i] - 1] + "…").ljust(widths[i])
                               for i, c in enumerate(r)).rstrip())
    t = totals(scores)
    score = t.capture_score
    lines.append("")
    lines.append(f"item #1 on captures: {t.captures_pass}/{t.captures}"
                 + (f" = {score:.0%} (required {REQUIRED_SCORE:.0%})" if score is not None else ""))
    lines.append(f"item #1 on synthetic entries: {t.synthetic_pass}/{t.synthetic} (all required)")
    lines.append(f"trust: {t.trust_pass}/{t.trust} equal" + (f"; {t.skipped} skipped" if t.skipped else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 when the scores miss the bar")
    ap.add_argument("--only", action="append", default=[], help="score only this entry id (repeatable)")
    args = ap.parse_args(argv)
    entries = [e for e in load_entries() if not args.only or e.id in args.only]
    scores = list(run_all(entries))
    print(table(scores))
    return 1 if args.check and not totals(scores).ok() else 0


if __name__ == "__main__":
    sys.exit(main())
