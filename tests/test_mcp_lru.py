"""The MCP server's one bounded memory (hotspot/mcp/lru.py): remembered answers, held documents
and first pages are all least-recently-used maps over it."""

from __future__ import annotations

from hotspot.mcp.lru import Lru
from hotspot.mcp.paging import Held


def test_least_recently_used_goes_first_by_count():
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1          # a is now the most recent
    lru.put("c", 3)                   # over 2: b (least recent) goes
    assert (lru.get("a"), lru.get("b"), lru.get("c")) == (1, None, 3) and len(lru) == 2


def test_bounded_by_size_a_value_over_the_limit_is_not_kept():
    held = Held(limit_bytes=10)
    held.put("x", b"12345")
    held.put("y", b"123456")          # 11 bytes: x goes
    assert held.get("x") is None and held.get("y") == b"123456"
    held.put("z", b"12345678901")     # larger than the whole limit: not kept, y stays
    assert held.get("z") is None and held.get("y") == b"123456"
    held.put("y", b"1")               # replaced: its old size no longer counts
    held.put("w", b"123456789")       # 1 + 9 = 10 bytes: both fit
    assert held.get("y") == b"1" and held.get("w") == b"123456789"
    assert held.pop("w") == b"123456789" and held.get("w") is None
