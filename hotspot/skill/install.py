"""Copy the packaged skill folder to a destination without clobbering different files."""

from __future__ import annotations

from pathlib import Path

from hotspot.errors import InputError, os_fault
from hotspot.outfile import write_atomically
from hotspot.result import Result
from hotspot.record import record

SKILL_NAME = "hotspot"


def skill_dir() -> Path:
    """The skill folder: the copy a wheel carries (setup.py puts skills/hotspot there at build time),
    else the checkout's skills/hotspot (an editable install runs from the source tree)."""
    here = Path(__file__).resolve().parent
    packaged = here / SKILL_NAME
    if (packaged / "SKILL.md").is_file():
        return packaged
    return here.parents[1] / "skills" / SKILL_NAME


def skill_files() -> list[Path]:
    """Files of the skill, relative to its folder, in a stable order (SKILL.md first)."""
    root = skill_dir()
    files = sorted(p.relative_to(root) for p in root.rglob("*.md") if p.is_file())
    return sorted(files, key=lambda p: (p.name != "SKILL.md", str(p)))


@record
class InstallData:
    dest: str
    written: list[str]
    unchanged: list[str]
    overwritten: list[str]


@record
class PathData:
    path: str
    files: list[str]


def install_skill(dest: Path, force: bool = False) -> Result[InstallData]:
    if dest.exists() and not dest.is_dir():
        raise InputError(f"{dest}: exists and is not a directory", "give --dest a folder path")
    plan: list[tuple[Path, Path, bytes]] = []
    conflicts: list[Path] = []
    for rel in skill_files():
        content = (skill_dir() / rel).read_bytes()
        target = dest / rel
        if target.exists() and (not target.is_file() or target.read_bytes() != content):
            conflicts.append(target)
        plan.append((rel, target, content))
    _refuse_sources([target for _, target, _ in plan])
    if conflicts and not force:
        names = ", ".join(str(c) for c in conflicts)
        raise InputError(f"{conflicts[0]}: a different file already exists (conflicts: {names})",
                         "rerun with --force to overwrite, or choose another --dest",
                         code="file-exists")
    written: list[str] = []
    unchanged: list[str] = []
    overwritten: list[str] = []
    for rel, target, content in plan:
        if target.is_file() and target.read_bytes() == content:
            unchanged.append(str(target))
            continue
        existed = target.exists()
        _write(target, content)
        (overwritten if existed else written).append(str(target))
    return Result("skill install", InstallData(str(dest), written, unchanged, overwritten))


def _refuse_sources(targets: list[Path]) -> None:
    """A destination file that is (symlink, hard link) one of the packaged skill files is never
    written, even with --force: that would change the skill every later install copies."""
    sources = {}
    for rel in skill_files():
        st = (skill_dir() / rel).stat()
        sources[(st.st_dev, st.st_ino)] = skill_dir() / rel
    for target in targets:
        try:
            st = target.stat()
        except OSError:
            continue
        source = sources.get((st.st_dev, st.st_ino))
        if source is not None:
            raise InputError(f"{target}: is the packaged skill file {source}; not overwritten, even with "
                             "--force", "choose another --dest", code="output-is-input",
                             details={"output": str(target), "input": str(source)})


def _write(target: Path, content: bytes) -> None:
    """Atomically (hotspot/outfile.py): a full disk leaves no half-written skill file (exit 3
    naming it); a target that is not a regular file is never replaced."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        err = os_fault(exc, target.parent, "cannot create the folder")
        if err is None:
            raise
        raise err from None
    write_atomically(target, lambda fh: fh.write(content))


def skill_path_result() -> Result[PathData]:
    return Result("skill path", PathData(str(skill_dir()), [str(p) for p in skill_files()]))
