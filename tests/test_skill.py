"""The agent skill: agentskills.io front-matter rules, the two copies identical, install/path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hotspot.skill.install import skill_dir, skill_files

ROOT = Path(__file__).resolve().parent.parent
REPO_COPY = ROOT / "skills" / "hotspot"
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def front_matter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert m, "SKILL.md must start with a --- YAML front matter block ---"
    meta = yaml.safe_load(m.group(1))
    assert isinstance(meta, dict)
    return meta, m.group(2)


@pytest.mark.parametrize("folder", [REPO_COPY, skill_dir()])
def test_front_matter_is_valid(folder: Path) -> None:
    meta, body = front_matter(folder / "SKILL.md")
    assert set(meta) <= ALLOWED_KEYS, set(meta) - ALLOWED_KEYS
    name = meta["name"]
    assert name == folder.name == "hotspot"
    assert re.fullmatch(r"[a-z0-9-]{1,64}", name) and not name.startswith("-") and "--" not in name
    desc = meta["description"]
    assert isinstance(desc, str) and 0 < len(desc) <= 1024 and "<" not in desc and ">" not in desc
    assert "Use it when" in desc  # says when, not only what
    if "compatibility" in meta:
        assert isinstance(meta["compatibility"], str) and len(meta["compatibility"]) <= 500
    if "metadata" in meta:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in meta["metadata"].items())
    assert len(body.splitlines()) < 500


def test_body_drives_the_loop_with_the_installed_command() -> None:
    _, body = front_matter(REPO_COPY / "SKILL.md")
    for step in ("hotspot doctor", "hotspot collect", "--plan", "hotspot diff", "--format json"):
        assert step in body, step
    assert "scripts/" not in body and ".py" not in body  # calls the installed command only
    assert re.search(r"\|\s*4\s*\|.*empty", body) and re.search(r"\|\s*5\s*\|.*stop", body)
    # the facts the predecessor got wrong
    assert "SET" in body and "1, 3" in body and "ONE buffer" in body and "`jobs`" in body
    for ref in re.findall(r"\]\((references/[^)]+)\)", body):
        assert (REPO_COPY / ref).is_file(), ref


def test_repo_and_package_copies_are_byte_identical() -> None:
    pkg = {str(p) for p in skill_files()}
    repo = {str(p.relative_to(REPO_COPY)) for p in REPO_COPY.rglob("*") if p.is_file()}
    assert pkg == repo and "SKILL.md" in pkg and any(p.startswith("references/") for p in pkg)
    for rel in pkg:
        assert (skill_dir() / rel).read_bytes() == (REPO_COPY / rel).read_bytes(), rel


@pytest.mark.parametrize("name", ["plan-rules.md", "stall-taxonomy.md"])
def test_skill_references_are_copies_of_docs(name: str) -> None:
    """docs/ is the one source; scripts/sync_skill.py copies; this fails when someone forgets."""
    assert (ROOT / "docs" / name).read_bytes() == (REPO_COPY / "references" / name).read_bytes(), \
        f"skills/hotspot/references/{name} differs from docs/{name}: run python scripts/sync_skill.py"


@pytest.mark.slow
def test_wheel_carries_the_skill(tmp_path: Path) -> None:
    """The build step (setup.py) copies skills/hotspot into the package of a wheel."""
    import subprocess
    import sys
    import zipfile

    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {proc.stderr.strip()[-300:]}")
    wheel = next(tmp_path.glob("hotspot-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in skill_files():
        assert f"hotspot/skill/hotspot/{rel}" in names, rel


def test_install_refuses_to_clobber_then_force(cli, tmp_path: Path) -> None:
    dest = tmp_path / "skills" / "hotspot"
    first = cli("skill", "install", "--dest", dest, "--format", "json")
    assert first.exit_code == 0, first.stderr
    assert len(first.json()["data"]["written"]) == len(skill_files())
    for rel in skill_files():
        assert (dest / rel).read_bytes() == (skill_dir() / rel).read_bytes()
    again = cli("skill", "install", "--dest", dest, "--format", "json").json()["data"]
    assert again["written"] == [] and len(again["unchanged"]) == len(skill_files())

    ref = dest / "references" / "json-fields.md"
    ref.write_text("my notes\n")
    refused = cli("skill", "install", "--dest", dest)
    assert refused.exit_code == 3 and "json-fields.md" in refused.stderr
    assert ref.read_text() == "my notes\n"
    forced = cli("skill", "install", "--dest", dest, "--force", "--format", "json")
    assert forced.exit_code == 0 and forced.json()["data"]["overwritten"] == [str(ref)]
    assert ref.read_bytes() == (skill_dir() / "references" / "json-fields.md").read_bytes()


def test_install_default_dest_and_path(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("skill", "install").exit_code == 0
    assert (tmp_path / ".claude" / "skills" / "hotspot" / "SKILL.md").is_file()
    run = cli("skill", "path")
    assert run.exit_code == 0 and Path(run.stdout.strip()) == skill_dir()
    (tmp_path / "afile").write_text("x")
    assert cli("skill", "install", "--dest", tmp_path / "afile").exit_code == 3
