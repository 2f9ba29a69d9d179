"""One arch decision: only hotspot/arch/decide.py turns evidence into a target; every reader
(capture, pmc, collect) hands it hints. Checked on the calls, so a second decider cannot hide."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hotspot"


def _calls(name: str) -> set[str]:
    """Modules (paths) outside hotspot/arch/ that call `name(...)` (a bare name or an attribute)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("hotspot/arch/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                    found.add(rel)
    return found


def test_only_the_arch_package_makes_an_arch():
    assert _calls("Arch") == set()
    assert _calls("parse_arch") == set()


def test_the_readers_hand_their_evidence_to_decide():
    assert _calls("decide") == {"hotspot/capture/target.py", "hotspot/pmc/api.py", "hotspot/collect/api.py"}
    # the counter-name guess is a hint (pmc/api.py passes it to decide), never an answer of its own
    assert _calls("guess_arch_from_counters") == {"hotspot/pmc/api.py"}
    text = (PACKAGE / "pmc" / "api.py").read_text()
    assert "Evidence(guess.arch, source, COUNTERS)" in text


def test_no_silent_default_gfx_ip():
    from hotspot.arch import waitcnt
    from hotspot.arch.arch import Arch
    from hotspot.arch.decide import decide

    assert not hasattr(waitcnt, "DEFAULT_GFXIP")
    assert Arch("gfx1100").gfxip is None                       # no table: no IP, no rules
    assert Arch("gfx942").gfxip == 9
    assert decide([]).gfxip == 9                               # undecided: every CDNA candidate is gfx IP 9
    assert Arch(None, candidates=("gfx942", "gfx1100")).gfxip is None  # candidates without one common IP
