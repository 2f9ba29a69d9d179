"""Host-wide GPU device locks: one lock per physical device per host, shared by every hotspot process
of every user on that host, so two sweeps, or a sweep and a `hotspot collect`, never run on one GPU
at the same time.

Where: `/run/lock/hotspot/` (the system's lock folder: a world-writable, sticky tmpfs on Debian,
Ubuntu and most distributions; `/var/lock` is the same folder), else `/tmp/hotspot-locks/` where
/run/lock is not writable by everyone (RHEL, containers). /run/lock first because:
- it is host-local and emptied at boot, never aged out by tmp cleaners (systemd-tmpfiles ages /tmp:
  a lock file removed while held would let a second process lock a new file of the same name);
- Slurm's job_container/tmpfs and systemd's PrivateTmp give each job or service a /tmp of its own,
  which would hide one job's locks from the next; /run/lock is not private to them.
`HOTSPOT_LOCK_DIR=FOLDER` overrides it (the test suite gives each test its own).

Which device: the lock is keyed by the physical GPU (hotspot/collect/gpu_identity.py: its PCI
address from the KFD topology, the *_VISIBLE_DEVICES lists mapped through it), because indices are
per process: under Slurm's device cgroup every job calls its first GPU 0. Without a readable
topology (no amdgpu driver, a container without /sys/class/kfd) the lock is keyed by the name the
lists hold, as ROCR_VISIBLE_DEVICES gives it, and `lock_keys` says so once per process; with a
readable topology never (a list that leaves no GPU locks nothing). Where no GPU is hidden, a GPU's
host index is locked too: the name older hotspot versions used, so a rollout never lets an old and
a new hotspot share a GPU.

How: `flock` on an open file descriptor (`<host>.dev<ID>.lock`): the kernel releases it when the
holder dies, however it dies, so a lock never goes stale as a pid file would. The folder is created
sticky and world-writable (1777) and lock files world-readable/writable (0666), so users share them
without being able to remove each other's. The holder writes one line into its lock file (pid, user,
time, what it runs) so a waiting process can say who holds the device; that text is only shown,
never trusted. Files are opened with O_NOFOLLOW and written only when they are a plain file of one
link: a symlink or hard link planted in the world-writable folder cannot redirect the write.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import socket
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from hotspot.collect import gpu_identity
from hotspot.errors import InputError

LOCK_DIR_ENV = "HOTSPOT_LOCK_DIR"
# The system's lock folder first (see the module doc), /tmp where it is not writable by everyone.
SYSTEM_LOCK_DIRS = (("/run/lock", "hotspot"), ("/var/lock", "hotspot"), ("/tmp", "hotspot-locks"))
SHARED_FOLDER_MODE = 0o1777  # sticky and world-writable: everyone creates, nobody removes another's
SHARED_FILE_MODE = 0o666
HOLDER_MAX_BYTES = 512  # what is read back of a holder's line (another user could write anything)
FIX = f"set {LOCK_DIR_ENV} to a folder every hotspot user of this host can write (e.g. /tmp/hotspot-locks)"


def hostname() -> str:
    """This host's short name, as locks and sweep workers name it."""
    return socket.gethostname().split(".")[0] or "localhost"


def _world_writable(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_IWOTH) and os.access(path, os.W_OK | os.X_OK)


def lock_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the device locks: HOTSPOT_LOCK_DIR, else the first system folder that every user
    can write (created here sticky and world-writable when missing). Not created for an override
    until a lock is taken."""
    env = os.environ if environ is None else environ
    override = env.get(LOCK_DIR_ENV, "").strip()
    if override:
        return Path(override)
    for parent, name in SYSTEM_LOCK_DIRS:
        if _world_writable(parent):
            return Path(parent) / name
    return Path(SYSTEM_LOCK_DIRS[-1][0]) / SYSTEM_LOCK_DIRS[-1][1]


def lock_name(device: str) -> str:
    """The lock file of a physical device on this host; `device` is one of `lock_keys`."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", device) or "_"
    return f"{hostname()}.dev{safe}.lock"


def _ensure_folder(folder: Path, shared: bool) -> None:
    try:
        if shared:
            try:
                os.mkdir(folder, SHARED_FOLDER_MODE)
                os.chmod(folder, SHARED_FOLDER_MODE)  # mkdir's mode passes through the umask
            except FileExistsError:
                pass
        else:
            folder.mkdir(parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError as exc:
        raise InputError(f"cannot create the GPU lock folder {folder}: {exc.strerror or exc}", FIX) from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"the GPU lock folder {folder} is not a folder (a link or a file)", FIX)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"the GPU lock folder {folder} is not writable by this user", FIX)
    if shared and st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        # without the sticky bit any user could replace another's lock file by a new one
        raise InputError(f"the GPU lock folder {folder} is world-writable but not sticky (mode "
                         f"{stat.S_IMODE(st.st_mode):o}); its owner makes it 1777", FIX)


def _open(path: Path) -> tuple[int, bool]:
    """(fd, writable) of a lock file, created shared; read-only when another user's file is not
    writable for us (flock works on a read-only descriptor)."""
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, os.O_RDWR | flags, SHARED_FILE_MODE)
        writable = True
    except PermissionError:
        fd, writable = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), False
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != SHARED_FILE_MODE:
        try:
            os.fchmod(fd, SHARED_FILE_MODE)  # the umask narrowed it: other users must open it too
        except OSError:
            pass
    return fd, writable and stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def ready_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The lock folder, created when missing and checked (a folder, writable, sticky when shared).
    Done once by whoever takes locks again and again; a folder made unusable later fails at the
    lock file's open."""
    env = os.environ if environ is None else environ
    folder = lock_folder(env)
    _ensure_folder(folder, shared=not env.get(LOCK_DIR_ENV, "").strip())
    return folder


def try_lock(device: str, what: str, environ: Mapping[str, str] | None = None,
             folder: Path | None = None) -> int | None:
    """Take the host-wide lock of `device` without waiting: its descriptor (hold it while the device
    is used; closing it, or dying, releases the lock), or None when another process holds it.
    `what` is the one line a waiting process shows (e.g. "hotspot sweep DIR, entry NAME").
    `folder`: what `ready_folder` returned (else it is run here)."""
    path = (folder or ready_folder(environ)) / lock_name(device)
    try:
        fd, writable = _open(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"the GPU lock {path} is a symbolic link; hotspot does not follow it",
                             f"remove it, or {FIX}") from None
        raise InputError(f"cannot open the GPU lock {path}: {exc.strerror or exc}", FIX) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if writable:
        line = f"pid {os.getpid()} of {_user()} since {time.strftime('%Y-%m-%d %H:%M:%S')}: {what}\n"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, line.encode("utf-8", "replace")[:HOLDER_MAX_BYTES], 0)
        except OSError:
            pass  # the note is a courtesy; the lock is what counts
    return fd


def holder(device: str, environ: Mapping[str, str] | None = None) -> str:
    """Who holds `device`'s lock, as its holder wrote it ("" when unknown)."""
    from hotspot.diagnostics import printable

    path = lock_folder(environ) / lock_name(device)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        text = os.pread(fd, HOLDER_MAX_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
    return printable(text.strip().splitlines()[0] if text.strip() else "", newlines=False)


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def visible_devices(environ: Mapping[str, str]) -> list[str] | None:
    """The devices a process started with `environ` can use, as its lists name them (ROCR_VISIBLE_DEVICES
    narrowed by HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES, by the runtimes' rules as far as they
    apply without a topology: gpu_identity.fallback_names); None when nothing restricts it. The
    fallback of `lock_keys` when the physical devices cannot be known."""
    return gpu_identity.fallback_names(environ)


def host_devices(sysfs_root: Path = Path("/sys")) -> list[str]:
    """Every GPU of this host by ordinal (the KFD topology: no tool is run); device 0, HIP's default
    device, when the topology lists none."""
    from hotspot.collect.rocm_tools import parse_kfd_topology

    found = [str(g.index) for g in parse_kfd_topology(sysfs_root)]
    return found or ["0"]


FALLBACK_TOLD = {"on": False}  # the fallback is said once per process
NONE_TOLD = {"on": False}  # "no GPU to lock" is said once per process


def lock_keys(environ: Mapping[str, str], say: Callable[[str], None]) -> list[str]:
    """The lock names of every device a process started with `environ` can use: its physical GPUs
    (gpu_identity; also their host index where no GPU is hidden, the name older hotspot versions
    lock). Where the topology is readable these are the only names: when the lists leave no GPU
    there is nothing to lock ([], said once through `say`). Only without a usable topology, said
    once, the names its *_VISIBLE_DEVICES lists hold (every GPU of the topology, or device 0, when
    nothing restricts it): on such hosts no process can read the topology, so every process uses
    these names."""
    found = gpu_identity.physical_devices(environ)
    if found is not None:
        if not found and not NONE_TOLD["on"]:
            NONE_TOLD["on"] = True
            say("GPU locks: ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES leave this "
                "program no GPU of the KFD topology; nothing to lock (the program will find no device)")
        return found
    if not FALLBACK_TOLD["on"]:
        FALLBACK_TOLD["on"] = True
        root = gpu_identity.sysfs_root(environ).joinpath(*gpu_identity.TOPOLOGY)
        say(f"GPU locks: the physical devices are unknown (no GPU readable in {root}, or a GPU node "
            "there without location_id); locking by device number, which under Slurm's device cgroup "
            "(ConstrainDevices) every job counts from 0")
    names = visible_devices(environ)
    return names if names is not None else host_devices(gpu_identity.sysfs_root(environ))


WAIT_POLL_S = 0.5  # how often a waiting `collect` looks again


def hold_all(devices: list[str], what: str, say: Callable[[str], None],
             environ: Mapping[str, str] | None = None) -> list[int]:
    """Take the locks of every device in `devices`, waiting while any is held elsewhere (saying who
    holds it, once per holder). All or none at a time, in sorted order: two processes that want
    overlapping sets never hold one each and wait for the other. Returns the descriptors (close
    them to release); Ctrl-C while waiting raises KeyboardInterrupt as anywhere else."""
    wanted = sorted(dict.fromkeys(devices), key=lambda d: (not d.isdigit(), int(d) if d.isdigit() else 0, d))
    told: set[tuple[str, str]] = set()
    folder = ready_folder(environ)
    while True:
        fds: list[int] = []
        busy = None
        try:
            for device in wanted:
                fd = try_lock(device, what, environ, folder)
                if fd is None:
                    busy = device
                    break
                fds.append(fd)
        except BaseException:  # an unusable lock file or Ctrl-C: release what this pass took
            for fd in fds:
                os.close(fd)
            raise
        if busy is None:
            return fds
        for fd in fds:
            os.close(fd)
        who = holder(busy, environ)
        if (busy, who) not in told:
            told.add((busy, who))
            say(f"GPU device {busy} is in use on this host by {who or 'another hotspot process'}; "
                f"waiting for it (Ctrl-C stops; ROCR_VISIBLE_DEVICES=N picks another device)")
        time.sleep(WAIT_POLL_S)
