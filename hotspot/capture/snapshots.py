"""snapshots.json: the decoder's map from original source paths to files copied into the dir."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from hotspot.capture.files import MAX_JSON_DEPTH, is_regular_file, load_json, open_text
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
        if hit is not None and is_regular_file(hit):
            return hit, "snapshot"
        norm = _normalize(original)
        for old, new in self.remaps:
            if norm == old or norm.startswith(old.rstrip("/") + "/"):
                candidate = Path(new) / norm[len(old.rstrip("/")):].lstrip("/")
                if is_regular_file(candidate, confine=False):
                    return candidate, "source-map"
        return None, ""

    def has(self, original: str) -> bool:
        return _normalize(original) in self.files


def _normalize(path: str) -> str:
    return posixpath.normpath(path) if path else path


def flatten(tree: JsonValue, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """Nested path-component dict -> [(original path, local file name)]. A nesting deeper than
    any real path (MAX_JSON_DEPTH components) is refused with ValueError."""
    out: list[tuple[str, str]] = []
    if not isinstance(tree, dict):
        return out
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} path components")
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
            out.extend(flatten(child, path, depth + 1))
        elif isinstance(child, str):
            out.append((path, child))
    return out


def build_source_map(dispatch_dir: Path, tree: JsonValue, snapshots_path: Path) -> SourceMap:
    files: dict[str, Path] = {}
    warnings: list[str] = []
    root = dispatch_dir.resolve()
    try:
        entries = flatten(tree)
    except ValueError as exc:
        return SourceMap({}, (f"{snapshots_path}: {exc}; source snippets not available",))
    for original, local in entries:
        try:
            candidate = (dispatch_dir / local).resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
            warnings.append(f"{snapshots_path}: entry for {original} ({local}) is a symbolic "
                            "link loop; ignored")
            continue
        if root not in candidate.parents:
            warnings.append(f"{snapshots_path}: entry for {original} points outside the dispatch "
                            f"dir ({local}); ignored")
            continue
        files[_normalize(original)] = candidate
    return SourceMap(files, tuple(warnings))


def read_source_lines(path: Path) -> list[str] | None:
    """The snapshot file's lines, or None when it cannot be read (degrade, never fail)."""
    try:
        # snapshots were resolved inside the dispatch dir already; a checkout may link anywhere
        with open_text(path, confine=False) as fh:  # FIFOs and devices are refused
            return fh.read().splitlines()
    except (OSError, HotspotError):
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
    if not os.path.lexists(snap):
        return SourceMap(remaps=remaps)
    try:
        tree = load_json(snap)
    except HotspotError as err:
        warnings.append(f"{err.message}; source snippets not available")
        return SourceMap(remaps=remaps)
    smap = build_source_map(d, tree, snap)
    warnings.extend(smap.warnings)
    return SourceMap(smap.files, smap.warnings, remaps)
