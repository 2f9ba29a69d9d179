"""snapshots.json: the decoder's map from original source paths to files copied into the dir."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from hotspot.capture.files import load_json
from hotspot.errors import HotspotError
from hotspot.result import JsonValue


@dataclass(frozen=True)
class SourceMap:
    """Original path (normalized) -> local file inside the dispatch dir."""

    files: dict[str, Path] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def lookup(self, original: str) -> Path | None:
        hit = self.files.get(_normalize(original))
        return hit if hit is not None and hit.is_file() else None

    def has(self, original: str) -> bool:
        return _normalize(original) in self.files


def _normalize(path: str) -> str:
    return posixpath.normpath(path) if path else path


def flatten(tree: JsonValue, prefix: str = "") -> list[tuple[str, str]]:
    """Nested path-component dict -> [(original path, local file name)]."""
    out: list[tuple[str, str]] = []
    if not isinstance(tree, dict):
        return out
    for name, child in tree.items():
        if not isinstance(name, str):
            continue
        if name == "/" and not prefix:
            path = "/"
        elif prefix in ("", "/"):
            path = prefix + name
        else:
            path = f"{prefix}/{name}"
        if isinstance(child, dict):
            out.extend(flatten(child, path))
        elif isinstance(child, str):
            out.append((path, child))
    return out


def build_source_map(dispatch_dir: Path, tree: JsonValue, snapshots_path: Path) -> SourceMap:
    files: dict[str, Path] = {}
    warnings: list[str] = []
    root = dispatch_dir.resolve()
    for original, local in flatten(tree):
        candidate = (dispatch_dir / local).resolve()
        if root not in candidate.parents:
            warnings.append(f"{snapshots_path}: entry for {original} points outside the dispatch "
                            f"dir ({local}); ignored")
            continue
        files[_normalize(original)] = candidate
    return SourceMap(files, tuple(warnings))


def read_source_lines(path: Path) -> list[str] | None:
    """The snapshot file's lines, or None when it cannot be read (degrade, never fail)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


def load_source_map(d: Path, warnings: list[str]) -> SourceMap:
    """The dispatch dir's snapshots.json as a SourceMap (empty without one; problems are warnings)."""
    snap = d / "snapshots.json"
    if not snap.is_file():
        return SourceMap()
    try:
        tree = load_json(snap)
    except HotspotError as err:
        warnings.append(f"{err.message}; source snippets not available")
        return SourceMap()
    smap = build_source_map(d, tree, snap)
    warnings.extend(smap.warnings)
    return smap
