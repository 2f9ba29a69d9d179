"""Use cases behind `hotspot cache info` and `hotspot cache clear`."""

from __future__ import annotations

from hotspot.cache import store
from hotspot.record import record
from hotspot.result import Result

# Entry kinds by file-name prefix (hotspot/cache/derived.py and output.py name them).
KINDS = {"dispatch": "one dispatch's analysis (analyze, plan, report, diff)",
         "survey": "what ranks a dispatch among several (every command)",
         "report-views": "the report's ISA listing and wave timelines",
         "out": "a command's whole output (replayed as is)"}


@record
class KindUsage:
    kind: str
    what: str
    entries: int
    bytes: int


@record
class CacheInfo:
    path: str
    enabled: bool
    disabled_by: str | None  # "--no-cache" or "HOTSPOT_CACHE=off" when disabled
    usable: bool
    problem: str | None  # why the folder cannot be used (missing, another owner, ...)
    entries: int
    bytes: int
    limit_bytes: int
    kinds: list[KindUsage]


@record
class CacheCleared:
    path: str
    removed: int
    freed_bytes: int


def cache_info() -> Result[CacheInfo]:
    loc = store.location()
    found, _ = store.entries(loc.path) if loc.usable else ([], [])
    kinds = []
    for kind, what in KINDS.items():
        mine = [e for e in found if e.name.startswith(kind + "-")]
        kinds.append(KindUsage(kind, what, len(mine), sum(e.size for e in mine)))
    reason = store.disabled_reason()
    # a folder not created yet is not a problem: the first cached run creates it
    problem = None if loc.usable or loc.reason == "not created yet" else loc.reason
    return Result("cache info", CacheInfo(loc.path, not reason, reason or None, loc.usable, problem,
                                          len(found), sum(e.size for e in found), store.max_bytes(),
                                          kinds))


def cache_clear() -> Result[CacheCleared]:
    loc = store.location()
    removed, freed = store.clear(loc.path) if loc.usable else (0, 0)
    return Result("cache clear", CacheCleared(loc.path, removed, freed))
