"""Which physical GPU a process may use, whatever index it knows the GPU by: the identity the
host-wide device locks are keyed by (hotspot/collect/device_lock.py).

Indices are per process, not per host. Under Slurm with `ConstrainDevices=yes` every job's device
cgroup holds only its GPUs, the KFD driver refuses to read the topology properties of the others
(EPERM), ROCr numbers what is left from 0, and Slurm sets ROCR_VISIBLE_DEVICES to those renumbered
indices: two jobs on different GPUs both say "device 0". ROCR_VISIBLE_DEVICES, then
HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES, which HIP honours too) narrow the list again, each
counting within the previous one; each may also name a device by its UUID (`GPU-` and the 16 hex
digits of the topology's `unique_id`, as rocminfo prints it).

The KFD topology (<sysfs>/class/kfd/kfd/topology/nodes/N/properties: one `name value` pair a line,
values decimal; a node is a GPU when `simd_count` > 0) gives each GPU node:
- `domain` and `location_id`: the PCI address (location_id = bus << 8 | device << 3 | function);
  on a GPU split into partitions (MI300 CPX/TPX) the kernel also puts the partition in location_id,
  so every partition is a device of its own, as ROCr lists it;
- `unique_id`: the serial the UUID is made of (0 where the GPU has none).
The physical key is `pci-DDDD_BB_DD.F` from the first two (with `-pN` for any partition bits); the
topology nodes a process can read are, in node order, the list ROCR_VISIBLE_DEVICES counts in.

`HOTSPOT_SYSFS_ROOT` (for tests) reads another tree than /sys. Where no GPU node can be read, or an
entry of a *_VISIBLE_DEVICES list names no device of it, there is no identity: the caller falls back
to the names the lists hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hotspot.record import record

SYSFS_ROOT_ENV = "HOTSPOT_SYSFS_ROOT"
TOPOLOGY = ("class", "kfd", "kfd", "topology", "nodes")
UUID_PREFIX = "GPU-"
PCI_ADDRESS_BITS = 16  # location_id's low bits: bus (8), device (5), function (3)


@record
class KfdGpu:
    node: int  # the topology node id (CPUs are nodes too)
    domain: int
    location_id: int
    unique_id: int

    @property
    def key(self) -> str:
        """The host-wide name of this device: its PCI address, and partition bits if any."""
        loc = self.location_id
        bus, dev, fn = (loc >> 8) & 0xFF, (loc >> 3) & 0x1F, loc & 0x7
        extra = loc >> PCI_ADDRESS_BITS
        return f"pci-{self.domain:04x}_{bus:02x}_{dev:02x}.{fn:x}" + (f"-p{extra:x}" if extra else "")


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


def kfd_gpus(root: Path) -> list[KfdGpu]:
    """The GPU nodes of the KFD topology this process may read, in node order (ROCr's order)."""
    nodes = root.joinpath(*TOPOLOGY)
    try:
        names = sorted(int(p.name) for p in nodes.iterdir() if p.name.isdigit())
    except OSError:
        return []
    found = []
    for node in names:
        props = _properties(nodes / str(node) / "properties")
        if props is None or props.get("simd_count", 0) <= 0 or "location_id" not in props:
            continue
        found.append(KfdGpu(node, props.get("domain", 0), props["location_id"], props.get("unique_id", 0)))
    return found


def _uuid(text: str) -> int | None:
    if not text.upper().startswith(UUID_PREFIX):
        return None
    try:
        return int(text[len(UUID_PREFIX):], 16)
    except ValueError:
        return None


def _select(devices: list[KfdGpu], entries: Sequence[str]) -> list[KfdGpu] | None:
    """`devices` narrowed by one *_VISIBLE_DEVICES list (indices into it, or UUIDs); None when an
    entry names none of them."""
    chosen: list[KfdGpu] = []
    for entry in entries:
        if entry.isdigit():
            if int(entry) >= len(devices):
                return None
            chosen.append(devices[int(entry)])
            continue
        uid = _uuid(entry)
        match = [d for d in devices if uid and d.unique_id == uid]
        if not match:
            return None
        chosen.extend(match)  # partitions of one GPU share its serial: the UUID names them all
    return list(dict.fromkeys(chosen))


def listed(environ: Mapping[str, str], name: str) -> list[str]:
    return [d.strip() for d in environ.get(name, "").split(",") if d.strip()]


def physical_devices(environ: Mapping[str, str]) -> list[str] | None:
    """The keys of the physical GPUs a process started with `environ` can use, or None when they
    cannot be known (no readable KFD topology, or a list entry that names no device of it)."""
    devices: list[KfdGpu] | None = kfd_gpus(sysfs_root(environ))
    for names in (listed(environ, "ROCR_VISIBLE_DEVICES"),
                  listed(environ, "HIP_VISIBLE_DEVICES") or listed(environ, "CUDA_VISIBLE_DEVICES")):
        if devices and names:
            devices = _select(devices, names)
    return [d.key for d in devices] if devices else None
