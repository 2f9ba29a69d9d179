"""realtime.json reader: per shader engine, a linear map from shader clock to wall time."""

from __future__ import annotations

from pathlib import Path
from hotspot.record import record

# FORMATS.md §1.3: the second clock in realtime.json is the 100 MHz real-time counter; used when
# the file's metadata does not state its frequency.
DEFAULT_REALTIME_HZ = 100_000_000
SE_KEY_PREFIX = "SE"


@record
class ClockMap:
    """realtime_ticks = intercept + slope * shader_cycle (least-squares fit over the anchor pairs)."""

    slope: float
    intercept: float
    anchors: int

    def ticks(self, cycle: float) -> float:
        return self.intercept + self.slope * cycle


@record
class Realtime:
    frequency_hz: float
    maps: dict[int, ClockMap]  # shader engine -> map


def fit(pairs: list[tuple[int, int]]) -> ClockMap | None:
    """Least-squares line through (shader clock, real-time clock) pairs; None when the pairs do not
    pin a line with a positive slope (fewer than two distinct shader clocks, or time going back)."""
    n = len(pairs)
    if n < 2:
        return None
    mx = sum(p[0] for p in pairs) / n
    my = sum(p[1] for p in pairs) / n
    sxx = sum((p[0] - mx) ** 2 for p in pairs)
    if sxx == 0:
        return None
    slope = sum((p[0] - mx) * (p[1] - my) for p in pairs) / sxx
    if slope <= 0:
        return None
    return ClockMap(slope, my - slope * mx, n)


def read_dispatch_realtime(dispatch_dir: Path, warnings: list[str]) -> Realtime | None:
    """A dispatch dir's realtime.json (see read_realtime)."""
    return read_realtime(dispatch_dir / "realtime.json", warnings)


def read_realtime(path: Path, warnings: list[str]) -> Realtime | None:
    """The clock maps, or None (with a warning naming the file and field) when unusable."""
    from hotspot.capture.files import load_json
    from hotspot.errors import HotspotError

    if not path.is_file():
        return None
    try:
        doc = load_json(path)
    except HotspotError as err:
        warnings.append(f"{err.message}; timestamps fall back to shader cycles")
        return None
    if not isinstance(doc, dict):
        warnings.append(f"{path}: top level is not an object; timestamps fall back to shader cycles")
        return None
    metadata = doc.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    hz = meta.get("frequency", DEFAULT_REALTIME_HZ)
    if isinstance(hz, bool) or not isinstance(hz, (int, float)) or hz <= 0:
        warnings.append(f"{path}: field 'metadata.frequency' is not a positive number; timestamps "
                        "fall back to shader cycles")
        return None
    maps: dict[int, ClockMap] = {}
    for key, value in doc.items():
        if not key.startswith(SE_KEY_PREFIX) or not key[len(SE_KEY_PREFIX):].isdigit():
            continue
        pairs: list[tuple[int, int]] = []
        if isinstance(value, list):
            for p in value:
                if isinstance(p, list) and len(p) >= 2:
                    a, b = p[0], p[1]
                    if isinstance(a, int) and not isinstance(a, bool) and isinstance(b, int) \
                            and not isinstance(b, bool):
                        pairs.append((a, b))
        m = fit(pairs) if pairs and isinstance(value, list) and len(pairs) == len(value) else None
        if m is None:
            warnings.append(f"{path}: field '{key}' is not a list of at least two increasing "
                            "[gfx_clock, realtime_clock] pairs; timestamps fall back to shader cycles")
            return None
        maps[int(key[len(SE_KEY_PREFIX):])] = m
    return Realtime(float(hz), maps)
