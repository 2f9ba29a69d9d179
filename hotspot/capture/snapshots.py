"""snapshots.json: the decoder's map from original source paths to files copied into the dir."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from hotspot.capture.files import load_json
from hotspot.errors import HotspotError
from hotspot.result import JsonValue
from hotspot.record import record


@record
class SourceMap:
    """Original path (normalized) -> local file inside the dispatch dir."""

    files: dict[str, Path] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    # --source-map OLD=NEW: where a source named under OLD is read from when no snapshot holds it
    remaps: tuple[tuple[str, str], ...] = ()

    def lookup(self, original: str) -> Path | None:
        return self.find(original)[0]

    def find(self, original: str) -> tuple[Path | None, str]:
        """The local file for a source path and where it was found: "snapshot", "source-map"
        (a local checkout named by --source-map), or "" when neither has it."""
        hit = self.files.get(_normalize(original))
        if hit is not None and hit.is_file():
            return hit, "snapshot"
        norm = _normalize(original)
        for old, new in self.remaps:
            if norm == old or norm.startswith(old.rstrip("/") + "/"):
                candidate = Path(new) / norm[len(old.rstrip("/")):].lstrip("/")
                if candidate.is_file():
                    return candidate, "source-map"
        return None, ""

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


SOURCE_MAP_ENV = "HOTSPOT_SOURCE_MAP"


def parse_source_maps(values: Sequence[str] = (), env: str | None = None
                      ) -> tuple[tuple[str, str], ...]:
    """--source-map OLD=NEW values, then HOTSPOT_SOURCE_MAP (pairs separated by ':' as in PATH),
    as (OLD, NEW) pairs; the longest OLD is tried first."""
    import os

    from hotspot.errors import UsageError

    raw = list(values)
    env_value = os.environ.get(SOURCE_MAP_ENV, "") if env is None else env
    raw += [v for v in env_value.split(os.pathsep) if v]
    pairs = []
    for item in raw:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise UsageError(f"--source-map {item!r} is not OLD=NEW",
                             "e.g. --source-map /sgl-workspace/FlyDSL-lab=$HOME/FlyDSL-lab")
        pairs.append((_normalize(old), str(Path(new).expanduser())))
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def load_source_map(d: Path, warnings: list[str],
                    remaps: tuple[tuple[str, str], ...] = ()) -> SourceMap:
    """The dispatch dir's snapshots.json as a SourceMap (empty without one; problems are warnings),
    with the --source-map checkouts to fall back on."""
    snap = d / "snapshots.json"
    if not snap.is_file():
        return SourceMap(remaps=remaps)
    try:
        tree = load_json(snap)
    except HotspotError as err:
        warnings.append(f"{err.message}; source snippets not available")
        return SourceMap(remaps=remaps)
    smap = build_source_map(d, tree, snap)
    warnings.extend(smap.warnings)
    return SourceMap(smap.files, smap.warnings, remaps)
