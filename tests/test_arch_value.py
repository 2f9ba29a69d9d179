"""The Arch value (issue 14 point 4): a target normalized once, unknown targets get no borrowed
numbers, and per-arch facts live only in hotspot/arch tables."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hotspot.arch.arch import Arch, parse_arch, split_target_id
from hotspot.arch.targets import counters_for_arch
from hotspot.arch.targets import KNOWN_GFX, TARGETS
from hotspot.capture.target import detect_arch
from tests.conftest import corpus_path

PACKAGE = Path(__file__).resolve().parents[1] / "hotspot"
AGENT_HEADER = '"Node_Id","Agent_Type","Name","Product_Name","Gfx_Target_Version"\n'
VEC_ADD = corpus_path("att", "gfx950", "vec_add")


@pytest.mark.parametrize("text, gfx, features", [
    ("gfx942", "gfx942", ()),
    ("GFX942", "gfx942", ()),
    (" gfx942 ", "gfx942", ()),
    ("gfx942:sramecc+", "gfx942", ("sramecc+",)),
    ("gfx942:sramecc+:xnack-", "gfx942", ("sramecc+", "xnack-")),
    ("gfx90a:xnack+", "gfx90a", ("xnack+",)),
    ("gfx1250", "gfx1250", ()),
])
def test_target_ids_normalize_once(text: str, gfx: str, features: tuple[str, ...]) -> None:
    arch = parse_arch(text, "--arch")
    assert (arch.gfx, arch.features) == (gfx, features)
    assert arch.known == (gfx in TARGETS)
    assert split_target_id(text) == (gfx, features)


def test_unknown_and_undecided_are_different() -> None:
    unknown = parse_arch("gfx1250", "--arch")
    assert unknown.known is False and unknown.target is None and unknown.label == "gfx1250"
    undecided = Arch(None, candidates=("gfx942", "gfx950"))
    assert undecided.known is False and undecided.label.startswith("gfx9")
    assert counters_for_arch("gfx1250") is None  # no RDNA guess for a name outside the tables
    assert counters_for_arch("gfx942:sramecc+") is TARGETS["gfx942"].counters


def test_agent_info_with_target_features(tmp_path: Path) -> None:
    d = tmp_path / "ui_output_agent_300_dispatch_2"
    d.mkdir()
    (tmp_path / "x_agent_info.csv").write_text(
        AGENT_HEADER + '1,"GPU","gfx942:sramecc+:xnack-","AMD Instinct MI300X",90402\n')
    arch = detect_arch(d)
    assert (arch.gfx, arch.features, arch.known) == ("gfx942", ("sramecc+", "xnack-"), True)
    assert arch.product == "AMD Instinct MI300X"


def _copy_without_side_files(src: Path, tmp_path: Path) -> Path:
    d = tmp_path / src.name
    shutil.copytree(src, d)
    return d


def test_analyze_unknown_arch_borrows_nothing(cli, corpus, tmp_path: Path) -> None:
    d = _copy_without_side_files(VEC_ADD, tmp_path)
    res = cli("analyze", d, "--arch", "gfx1250", "--format", "json")
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert data["arch"]["gfx"] == "gfx1250" and data["arch"]["known"] is False
    occ = data["occupancy"]
    assert occ["available"] is False and occ["waves_per_simd"] is None and not occ["limits"]
    assert occ["candidates"] is None  # no per-candidate numbers either
    assert "gfx1250" in occ["reason"] and "arch table" in occ["reason"]


@pytest.mark.parametrize("given", ["gfx942:sramecc+", "GFX942", "gfx942:sramecc+:xnack-"])
def test_analyze_feature_suffixed_arch_is_the_known_target(cli, corpus, tmp_path: Path,
                                                           given: str) -> None:
    d = _copy_without_side_files(VEC_ADD, tmp_path)
    data = cli("analyze", d, "--arch", given, "--format", "json").json()["data"]
    plain = cli("analyze", d, "--arch", "gfx942", "--format", "json").json()["data"]
    assert data["arch"]["gfx"] == "gfx942" and data["arch"]["known"] is True
    assert data["arch"]["features"] == [f for f in given.lower().split(":")[1:]]
    assert data["occupancy"]["waves_per_simd"] == plain["occupancy"]["waves_per_simd"] is not None


def test_occupancy_command_unknown_arch_is_a_usage_error(cli) -> None:
    res = cli("occupancy", "--arch", "gfx1250", "--vgpr", "64", "--format", "json")
    assert res.exit_code == 2
    assert all(g in res.json()["error"]["message"] + res.json()["error"]["hint"] for g in KNOWN_GFX)
    ok = cli("occupancy", "--arch", "gfx942:sramecc+", "--vgpr", "128", "--format", "json")
    assert ok.exit_code == 0 and ok.json()["data"]["waves_per_simd"] == 4  # HARDWARE.md §1 example


# Comparisons with, or tables keyed by, a gfx name: per-arch facts belong in hotspot/arch tables.
_BRANCH = re.compile(r"""(==|!=)\s*["']gfx\d|["']gfx[0-9a-f]{3,4}["']\s*(==|!=)|in\s*\(["']gfx|"""
                     r"""["']gfx[0-9a-f]{3,4}["']\s*:\s*[^/]""")
# Generators of synthetic captures write per-arch sample files on purpose (agent_info rows).
_ALLOWED = {"synth/isa.py"}


def test_no_gfx_branches_outside_arch_tables() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("arch/") or rel in _ALLOWED:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if _BRANCH.search(code):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
