"""Which folders a tool call may name: the roots the client grants (MCP `roots/list`) and the
folders given to `hotspot mcp --root` (a client without roots and no --root: the working directory).
A path is inside a root when its real path (symbolic links and `..` resolved) is the root or below it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import unquote, urlparse

from hotspot.errors import HotspotError


class OutsideRoots(HotspotError):
    exit_code = 3
    code = "outside-roots"


def real(path: str, cwd: str | None = None) -> str:
    base = cwd or os.getcwd()
    return os.path.realpath(os.path.join(base, os.path.expanduser(path)))


def root_paths(uris: Iterable[str]) -> list[str]:
    """file:// URIs as real folder paths (other schemes grant nothing on this machine)."""
    out = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme == "file":
            out.append(os.path.realpath(unquote(parsed.path)))
    return out


def inside(path: str, roots: Iterable[str]) -> bool:
    p = real(path)
    for r in roots:
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def check(paths: Iterable[str], roots: list[str]) -> None:
    """Refuse the first path outside every root (before anything is read)."""
    for p in paths:
        if not inside(p, roots):
            shown = ", ".join(roots) if roots else "none"
            raise OutsideRoots(f"{p}: outside the folders this client granted (roots: {shown})",
                               "pass a path inside a granted root, or add its folder to the client's "
                               "roots or to the server's registration (`hotspot mcp --root DIR`)")
