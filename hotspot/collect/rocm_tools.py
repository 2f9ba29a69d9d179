"""Finding the ROCm tools collection needs: rocprofv3, the trace decoder library, the GPUs.

Search orders follow rocprofv3's own (FORMATS.md §2): the decoder is found via
--att-library-path, then ROCPROF_ATT_LIBRARY_PATH, then LD_LIBRARY_PATH and <rocm>/lib. We add the
places a pip/TheRock ROCm puts it (`rocm-sdk path --root`, the lib dir beside rocprofv3's bin dir).
Everything here only looks; nothing is installed or changed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from hotspot.record import record

ROCPROFV3 = "rocprofv3"
DECODER_LIBRARY = "librocprof-trace-decoder.so"
# Where ROCm lands when ROCM_PATH is unset (the packages' default prefix).
DEFAULT_ROCM_ROOTS: tuple[str, ...] = ("/opt/rocm",)
# Version/inventory probes are quick; a hung driver must not hang `hotspot doctor`.
PROBE_TIMEOUT_S = 20.0
DOCTOR_TIMEOUT_S = 120.0

FIX_ROCPROFV3 = ("install ROCm with rocprofiler-sdk (provides rocprofv3) and put <rocm>/bin on PATH, "
                 "set ROCM_PATH, or pass --rocprofv3 /path/to/rocprofv3")
FIX_DECODER = ("install the rocprof-trace-decoder library (package rocprof-trace-decoder, or the "
               "release from github.com/ROCm/rocprof-trace-decoder) and pass --att-library-path DIR "
               "(the folder holding librocprof-trace-decoder.so) or set ROCPROF_ATT_LIBRARY_PATH=DIR")


@record
class Found:
    path: str
    source: str  # which rule found it, e.g. "PATH", "$ROCM_PATH/bin", "--rocprofv3"


def rocm_roots() -> list[Path]:
    roots = []
    if os.environ.get("ROCM_PATH"):
        roots.append(Path(os.environ["ROCM_PATH"]))
    roots += [Path(r) for r in DEFAULT_ROCM_ROOTS]
    return roots


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_rocprofv3(explicit: str | None = None) -> Found | None:
    """`--rocprofv3 PATH`, then PATH, then $ROCM_PATH/bin, then /opt/rocm/bin."""
    if explicit:
        p = Path(explicit).expanduser()
        if _executable(p):
            return Found(str(p.resolve()), "--rocprofv3")
        hit = shutil.which(explicit)
        return Found(hit, "--rocprofv3") if hit else None
    hit = shutil.which(ROCPROFV3)
    if hit:
        return Found(hit, "PATH")
    for root in rocm_roots():
        cand = root / "bin" / ROCPROFV3
        if _executable(cand):
            label = "$ROCM_PATH/bin" if os.environ.get("ROCM_PATH") and root == Path(os.environ["ROCM_PATH"]) \
                else f"{root}/bin"
            return Found(str(cand), label)
    return None


def probe(argv: list[str], timeout: float = PROBE_TIMEOUT_S) -> tuple[int | None, str, str]:
    """Run a short inventory command; (exit code or None if it could not run, stdout, stderr)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, "", str(exc)
    return done.returncode, done.stdout, done.stderr


_VERSION_RE = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


def rocprofv3_version(path: str) -> tuple[str | None, str]:
    """(dotted version or None, first line of `rocprofv3 --version`)."""
    code, out, err = probe([path, "--version"])
    text = (out or err).strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if code != 0:
        return None, first or err.strip()
    m = _VERSION_RE.search(text)
    return (m.group(1) if m else None), first


def _decoder_in(folder: Path) -> Path | None:
    if folder.is_file() and folder.name.startswith(DECODER_LIBRARY):
        return folder
    if not folder.is_dir():
        return None
    exact = folder / DECODER_LIBRARY
    if exact.exists():
        return exact
    versioned = sorted(folder.glob(DECODER_LIBRARY + ".*"))
    return versioned[0] if versioned else None


def _rocm_sdk_root() -> Path | None:
    tool = shutil.which("rocm-sdk")
    if not tool:
        return None
    code, out, _ = probe([tool, "path", "--root"])
    line = out.strip().splitlines()[0] if code == 0 and out.strip() else ""
    return Path(line) if line else None


def decoder_candidates(explicit: str | None, rocprofv3: str | None) -> list[tuple[Path, str]]:
    cands: list[tuple[Path, str]] = []
    if explicit:
        cands.append((Path(explicit).expanduser(), "--att-library-path"))
    for var in ("ROCPROF_ATT_LIBRARY_PATH", "LD_LIBRARY_PATH"):
        for part in os.environ.get(var, "").split(os.pathsep):
            if part:
                cands.append((Path(part), var))
    for root in rocm_roots():
        cands.append((root / "lib", f"{root}/lib"))
    if rocprofv3:
        cands.append((Path(rocprofv3).resolve().parent.parent / "lib", "beside rocprofv3"))
    sdk = _rocm_sdk_root()
    if sdk:
        cands.append((sdk / "lib", "rocm-sdk path --root"))
    return cands


def find_decoder(explicit: str | None = None, rocprofv3: str | None = None) -> Found | None:
    """The folder holding the decoder library (what att_library_path wants), and how it was found.

    An explicit --att-library-path that does not hold the library is NOT silently replaced by
    another location: the user asked for that one."""
    for folder, source in decoder_candidates(explicit, rocprofv3):
        lib = _decoder_in(folder)
        if lib is not None:
            return Found(str(lib.parent.resolve()), source)
        if source == "--att-library-path":
            return None
    return None


@record
class Gpu:
    index: int
    gfx: str
    product: str
    source: str


_AGENT_SPLIT = re.compile(r"^\*+\s*$\n^Agent \d+\s*$\n^\*+\s*$", re.MULTILINE)


def parse_rocminfo(text: str) -> list[Gpu]:
    """GPU agents from `rocminfo` output: blocks with `Device Type: GPU` and `Name: gfxNNN`."""
    gpus: list[Gpu] = []
    for block in _AGENT_SPLIT.split(text)[1:]:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.strip().partition(":")
            if sep and key.strip() not in fields:
                fields[key.strip()] = value.strip()
        if fields.get("Device Type", "").upper() != "GPU":
            continue
        gpus.append(Gpu(len(gpus), fields.get("Name", "?"), fields.get("Marketing Name", ""), "rocminfo"))
    return gpus


_SMI_GFX = re.compile(r"GPU\[(\d+)\].*?GFX Version:\s*(gfx[0-9a-f]+)", re.IGNORECASE)
_SMI_NAME = re.compile(r"GPU\[(\d+)\].*?Card (?:Series|Model):\s*(.+)", re.IGNORECASE)


def parse_rocm_smi(text: str) -> list[Gpu]:
    gfx = {int(i): g for i, g in _SMI_GFX.findall(text)}
    names: dict[int, str] = {}
    for i, n in _SMI_NAME.findall(text):
        names.setdefault(int(i), n.strip())
    return [Gpu(i, gfx[i], names.get(i, ""), "rocm-smi") for i in sorted(gfx)]


def find_tool(name: str, rocprofv3: str | None = None) -> str | None:
    hit = shutil.which(name)
    if hit:
        return hit
    dirs = [root / "bin" for root in rocm_roots()]
    if rocprofv3:
        dirs.insert(0, Path(rocprofv3).parent)
    for d in dirs:
        if _executable(d / name):
            return str(d / name)
    return None


def gfx_from_target_version(version: int) -> str:
    """KFD's gfx_target_version (major*10000 + minor*100 + stepping) as a gfx name: 90402 -> gfx942,
    90010 -> gfx90a (the stepping is one hex digit in the name)."""
    major, minor, step = version // 10000, version // 100 % 100, version % 100
    return f"gfx{major}{minor}{step:x}"


def parse_kfd_topology(sysfs_root: Path) -> list[Gpu]:
    """GPU nodes of the KFD topology (<root>/class/kfd/kfd/topology/nodes/N/properties): a node is a
    GPU when simd_count > 0 (CPU nodes have none). Ordered by node id, which is the order HIP numbers
    the devices in, so the list index is the HIP_VISIBLE_DEVICES ordinal."""
    nodes = sysfs_root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    found: list[tuple[int, str]] = []
    for node in nodes.iterdir() if nodes.is_dir() else ():
        if not node.name.isdigit():
            continue
        try:
            text = (node / "properties").read_text()
        except OSError:
            continue
        props: dict[str, int] = {}
        for line in text.splitlines():
            key, _, value = line.strip().partition(" ")
            if value.strip().lstrip("-").isdigit():
                props[key] = int(value)
        if props.get("simd_count", 0) > 0:
            version = props.get("gfx_target_version", 0)
            found.append((int(node.name), gfx_from_target_version(version) if version else "?"))
    return [Gpu(i, gfx, "", "kfd-topology") for i, (_, gfx) in enumerate(sorted(found))]


def parse_amd_smi(text: str) -> list[Gpu]:
    """`amd-smi static --asic --json`: a list (or {"gpu_data": [...]}) of {"gpu": N, "asic":
    {"target_graphics_version": "gfx942", "market_name": ...}}."""
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return []
    items = doc.get("gpu_data", []) if isinstance(doc, dict) else doc
    gpus = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("gpu"), int):
            continue
        given = item.get("asic")
        asic = given if isinstance(given, dict) else {}
        gpus.append(Gpu(item["gpu"], str(asic.get("target_graphics_version") or "?"),
                        str(asic.get("market_name") or ""), "amd-smi"))
    return sorted(gpus, key=lambda g: g.index)


def list_gpus(rocprofv3: str | None = None, sysfs_root: Path = Path("/sys")) -> tuple[list[Gpu], str]:
    """(GPUs, how we looked): rocminfo (names gfx targets), then amd-smi, rocm-smi, and finally the
    KFD topology in sysfs, which needs no ROCm user-space at all."""
    tried = []
    for name, parse, args in (("rocminfo", parse_rocminfo, []),
                              ("amd-smi", parse_amd_smi, ["static", "--asic", "--json"]),
                              ("rocm-smi", parse_rocm_smi, ["--showproductname"])):
        tool = find_tool(name, rocprofv3)
        if not tool:
            tried.append(f"{name}: not found")
            continue
        code, out, err = probe([tool, *args])
        if code != 0:
            tried.append(f"{name}: exit {code}: {(err or out).strip()[-200:]}")
            continue
        gpus = parse(out)
        if gpus:
            return gpus, name
        tried.append(f"{name}: no GPU agent listed")
    gpus = parse_kfd_topology(sysfs_root)
    if gpus:
        return gpus, "kfd-topology"
    tried.append(f"kfd topology: no GPU node under {sysfs_root}/class/kfd/kfd/topology/nodes")
    return [], "; ".join(tried)
