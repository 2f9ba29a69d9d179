"""Which physical GPU a process may use, whatever index it knows the GPU by: the identity the
host-wide device locks are keyed by (hotspot/collect/device_lock.py), and the devices a sweep may pin
its entries to (hotspot/sweep/scheduler.py `pin_env`).

Indices are per process, not per host. Under Slurm with `ConstrainDevices=yes` every job's device
cgroup holds only its GPUs, the KFD driver refuses to read the topology properties of the others
(EPERM), ROCr numbers what is left from 0, and Slurm sets ROCR_VISIBLE_DEVICES to those renumbered
indices: two jobs on different GPUs both say "device 0".

The KFD topology (<sysfs>/class/kfd/kfd/topology/nodes/N/properties: one `name value` pair a line,
values decimal; a node is a GPU when `simd_count` > 0) gives each GPU node:
- `domain` and `location_id`: the PCI address, location_id = bus << 8 | device << 3 | function
  (kfd_topology.c: `pci_dev_id()`); on a GPU split into partitions (MI300 CPX/TPX, more than one
  KFD node per device) the kernel ORs the partition's node id into it, i.e. into the function bits,
  so partitions 0..7 of one GPU read as functions .0 .. .7 of its address: each a device of its own,
  as ROCr lists it;
- `unique_id`: the serial the UUID is made of (0 where the GPU has none).
The physical key is `pci-DDDD_BB_DD.F`; the readable GPU nodes, in node order, are the list
ROCR_VISIBLE_DEVICES counts in.

Which of them a process gets is decided as the runtimes decide it (`visible_gpus`):
- ROCr (ROCR_VISIBLE_DEVICES, rocr-runtime amd_filter_device.cpp): set but empty is zero devices;
  tokens are comma-separated, trimmed, case-insensitive; one starting with `G` is a UUID (`GPU-`
  and 16 hex digits, 5 to 20 characters) that may be cut short, and a prefix matching two devices
  is invalid; any other token is an index read as strtol base 0 (`0x1` is 1, `010` is 8); an
  invalid, out-of-range or repeated token ends the list and the devices before it stay; the
  devices come in the order listed.
- HIP/CLR (rocclr's device init): HIP_VISIBLE_DEVICES when not empty, else CUDA_VISIBLE_DEVICES,
  counting within what ROCr exposes; an entry is an index written exactly as a decimal number, or
  contains `GPU-` and is matched as a substring of a device's UUID (lowercase hex, as ROCr reports
  it), first match wins; an invalid entry ends the list (those before stay), repeats are skipped.
  One exception (`hip_list`): a HIP-level list equal to ROCR_VISIBLE_DEVICES's, as Slurm sets
  them, is one restriction, not two.

`HOTSPOT_SYSFS_ROOT` (for tests) reads another tree than /sys. Where no GPU node can be read, or a
readable GPU node has no `location_id` (the order would shift), the topology is unknown (None /
[]): the caller falls back to the names the lists hold (`fallback_names`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from hotspot.record import record

SYSFS_ROOT_ENV = "HOTSPOT_SYSFS_ROOT"
TOPOLOGY = ("class", "kfd", "kfd", "topology", "nodes")
UUID_PREFIX = "GPU-"
PCI_ADDRESS_BITS = 16  # location_id's low bits: bus (8), device (5), function (3)
FUNCTION_BITS = 3  # a partition's node id lands here (kfd_topology.c: location_id |= node_id)
WHOLE_GPU_ENV = "HOTSPOT_LOCK_WHOLE_GPU"  # 1: lock every partition of a partitioned GPU's package
ROCR_UUID_LENGTHS = (5, 20)  # amd_filter_device.cpp ProcessUuidToken: shorter or longer is invalid


@record
class KfdGpu:
    node: int  # the topology node id (CPUs are nodes too)
    domain: int
    location_id: int
    unique_id: int

    @property
    def key(self) -> str:
        """The host-wide name of this device: its PCI address (a partition's id is in the function
        bits). Bits above the address are set by no current kernel (a reverted variant put the
        partition at bit 28); kept as `-pN` so such devices stay apart."""
        loc = self.location_id
        bus, dev, fn = (loc >> 8) & 0xFF, (loc >> 3) & 0x1F, loc & 0x7
        extra = loc >> PCI_ADDRESS_BITS
        return f"pci-{self.domain:04x}_{bus:02x}_{dev:02x}.{fn:x}" + (f"-p{extra:x}" if extra else "")

    @property
    def package_keys(self) -> list[str]:
        """The keys of every partition the package of this device can have (function bits 0..7):
        what `HOTSPOT_LOCK_WHOLE_GPU=1` locks, so it meets any process on a sibling partition,
        even one this process's cgroup hides."""
        base = self.location_id & ~((1 << FUNCTION_BITS) - 1)
        return [KfdGpu(self.node, self.domain, base | fn, self.unique_id).key for fn in range(1 << FUNCTION_BITS)]


@record
class Topology:
    gpus: list[KfdGpu]  # the readable GPU nodes, in node order (ROCr's order)
    complete: bool  # every node was readable: no cgroup hides a GPU, so positions are host indices


def sysfs_root(environ: Mapping[str, str]) -> Path:
    return Path(environ.get(SYSFS_ROOT_ENV, "").strip() or "/sys")


def _properties(path: Path) -> dict[str, int] | None:
    try:
        text = path.read_text()
    except OSError:  # EPERM: a GPU outside this process's device cgroup
        return None
    props: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        value = value.strip()
        if value.lstrip("-").isdigit():
            props[key] = int(value)
    return props


def topology(root: Path) -> Topology | None:
    """The KFD topology as this process may read it; None when it is unknown: no GPU node readable,
    or a readable GPU node without `location_id` (skipping it would shift every later index)."""
    nodes = root.joinpath(*TOPOLOGY)
    try:
        names = sorted(int(p.name) for p in nodes.iterdir() if p.name.isdigit())
    except OSError:
        return None
    found = []
    complete = True
    for node in names:
        props = _properties(nodes / str(node) / "properties")
        if props is None:
            complete = False
            continue
        if props.get("simd_count", 0) <= 0:
            continue
        if "location_id" not in props:
            return None
        found.append(KfdGpu(node, props.get("domain", 0), props["location_id"], props.get("unique_id", 0)))
    return Topology(found, complete) if found else None


def kfd_gpus(root: Path) -> list[KfdGpu]:
    """The GPU nodes of the KFD topology this process may read, in node order; [] when unknown."""
    topo = topology(root)
    return topo.gpus if topo else []


# ---------------------------------------------------------------- the runtimes' selection rules
_STRTOL0 = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def _strtol0(token: str) -> int | None:
    """`token` read as C's strtol(token, &end, 0) with nothing left over; None otherwise."""
    if not _STRTOL0.fullmatch(token):
        return None
    body = token.lstrip("+-")
    return int(token, 16 if body[:2] in ("0x", "0X") else 8 if body[:1] == "0" else 10)


def rocr_uuid(gpu: KfdGpu) -> str:
    """The UUID as ROCr's filter compares it (upper case); none for a GPU without a serial."""
    return f"GPU-{gpu.unique_id:016X}" if gpu.unique_id else "Invalid-UUID"


def hip_uuid(gpu: KfdGpu) -> str:
    """The UUID as HIP reads it from ROCr (HSA_AMD_AGENT_INFO_UUID: lower-case hex, `GPU-XX` without
    a serial)."""
    return f"GPU-{gpu.unique_id:016x}" if gpu.unique_id else "GPU-XX"


def rocr_select(gpus: Sequence[KfdGpu], value: str | None) -> list[KfdGpu]:
    """What ROCr exposes of `gpus` (the readable GPU nodes) under ROCR_VISIBLE_DEVICES=`value`."""
    if value is None:
        return list(gpus)
    chosen: list[KfdGpu] = []
    if not value:
        return chosen  # set but empty: zero devices
    for raw in value.split(",")[:len(gpus)]:
        token = raw.strip().upper()
        index: int | None
        if token.startswith("G"):
            matches = [i for i, g in enumerate(gpus) if rocr_uuid(g).startswith(token)]
            ok_len = ROCR_UUID_LENGTHS[0] <= len(token) <= ROCR_UUID_LENGTHS[1]
            index = matches[0] if ok_len and len(matches) == 1 else None
        else:
            index = _strtol0(token)
        if index is None or not 0 <= index < len(gpus) or gpus[index] in chosen:
            break  # invalid or repeated: the list ends here, the devices before it stay
        chosen.append(gpus[index])
    return chosen


def hip_list(environ: Mapping[str, str]) -> str:
    """The list HIP applies: HIP_VISIBLE_DEVICES when not empty, else CUDA_VISIBLE_DEVICES; "" (no
    narrowing) when it is ROCR_VISIBLE_DEVICES's list word for word. Slurm's gres/gpu sets
    CUDA_VISIBLE_DEVICES (and GPU_DEVICE_ORDINAL) to the list it sets ROCR_VISIBLE_DEVICES to: one
    restriction stated twice. Read strictly, HIP would count `2,3` again within the two devices
    ROCr kept and see none; ROCr-level programs (MPI, OpenMP offload) see both, so the devices
    locked and handed to a sweep's entries are ROCr's (the larger set: never fewer locks)."""
    hip = environ.get("HIP_VISIBLE_DEVICES", "") or environ.get("CUDA_VISIBLE_DEVICES", "")
    return "" if hip == environ.get("ROCR_VISIBLE_DEVICES") else hip


def _hip_index(token: str, count: int, uuids: Sequence[str]) -> int | None:
    if "GPU-" in token:
        token = next((str(i) for i, u in enumerate(uuids) if token in u), token)
    if not token.isdigit() or token != str(int(token)) or int(token) >= count:
        return None
    return int(token)


def hip_select(exposed: Sequence[KfdGpu], value: str) -> list[KfdGpu]:
    """What HIP makes of the devices ROCr `exposed` under the list `value` (see `hip_list`)."""
    if not value:
        return list(exposed)
    chosen: list[KfdGpu] = []
    uuids = [hip_uuid(g) for g in exposed]
    for token in value.split(","):
        index = _hip_index(token, len(exposed), uuids)
        if index is None:
            break  # an invalid entry ends the list; those before stay
        if exposed[index] not in chosen:
            chosen.append(exposed[index])
    return chosen


def visible_gpus(environ: Mapping[str, str], topo: Topology | None = None) -> list[KfdGpu] | None:
    """The GPUs a process started with `environ` gets, in its device order; None when the topology
    is unknown. [] when its lists leave it no GPU."""
    topo = topo or topology(sysfs_root(environ))
    if topo is None:
        return None
    return hip_select(rocr_select(topo.gpus, environ.get("ROCR_VISIBLE_DEVICES")), hip_list(environ))


def restricted(environ: Mapping[str, str]) -> bool:
    """Whether any of the lists is set (ROCR_VISIBLE_DEVICES even empty; HIP's when not empty)."""
    return "ROCR_VISIBLE_DEVICES" in environ or bool(hip_list(environ))


def pinned_names(environ: Mapping[str, str]) -> list[str] | None:
    """For each device a process started with `environ` gets (in its order), the
    ROCR_VISIBLE_DEVICES token that selects that device alone in the same view: its position among
    the readable GPU nodes, else (topology unknown) the name the lists hold. None when nothing
    restricts the process (its devices are 0, 1, ... of its view)."""
    if not restricted(environ):
        return None
    topo = topology(sysfs_root(environ))
    if topo is None:
        return fallback_names(environ) or []
    gpus = visible_gpus(environ, topo) or []
    return [str(topo.gpus.index(g)) for g in gpus]


def fallback_names(environ: Mapping[str, str]) -> list[str] | None:
    """Without a topology: the names the lists hold, by the same rules as far as they can be
    applied without knowing the devices (ROCr's tokens kept in order until an invalid or repeated
    one, index tokens written in decimal; HIP's indices counting within them); None when nothing
    restricts the process."""
    rocr = environ.get("ROCR_VISIBLE_DEVICES")
    names: list[str] | None = None
    if rocr is not None:
        names = []
        for raw in rocr.split(",") if rocr else []:
            token = raw.strip().upper()
            if token.startswith("G"):
                name = token if ROCR_UUID_LENGTHS[0] <= len(token) <= ROCR_UUID_LENGTHS[1] else None
            else:
                number = _strtol0(token)
                name = str(number) if number is not None and number >= 0 else None
            if name is None or name in names:
                break
            names.append(name)
    hip = hip_list(environ)
    if not hip:
        return names
    chosen: list[str] = []
    for token in hip.split(","):
        if names is None:  # counting within devices nobody listed: the index is the name
            index = _hip_index(token, 1 << 31, [])
            name = None if index is None else str(index)
        else:
            index = _hip_index(token, len(names), [])  # a UUID cannot be matched: unknown devices
            name = None if index is None else names[index]
        if name is None:
            break
        if name not in chosen:
            chosen.append(name)
    return chosen


def physical_devices(environ: Mapping[str, str]) -> list[str] | None:
    """The lock keys of the physical GPUs a process started with `environ` can use (in its order),
    or None when they cannot be known (no usable KFD topology). [] when its lists leave it no GPU.
    Where every node of the topology is readable, each GPU's host index is a key too (older
    hotspot versions lock `dev<N>` by it); with HOTSPOT_LOCK_WHOLE_GPU=1 every partition of the
    GPU's package is."""
    topo = topology(sysfs_root(environ))
    if topo is None:
        return None
    gpus = visible_gpus(environ, topo) or []
    whole = environ.get(WHOLE_GPU_ENV, "").strip() not in ("", "0")
    keys: list[str] = []
    for gpu in gpus:
        keys.extend(gpu.package_keys if whole else [gpu.key])
        if topo.complete:
            keys.append(str(topo.gpus.index(gpu)))
    return list(dict.fromkeys(keys))


