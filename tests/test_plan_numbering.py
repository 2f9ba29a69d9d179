"""One numbering (issue 33, point 6): the same item is #N in text, markdown, JSON and HTML, and
capture (trust) items take no number in any of them."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.conftest import CORPUS

# a capture with a capture item (source-collapse) before three ranked items
CAPTURE = CORPUS / "att" / "gfx950" / "preshuffle_gemm_v2"
FULL_RE = re.compile(r"^(\d+)\. \[(?:HIGH|MED|LOW)\] ([a-z0-9-]+): ", re.M)
SHORT_RE = re.compile(r"^(\d+)\. \[(?:HIGH|MED|LOW)\] +\S+  ([a-z0-9-]+)  ", re.M)
HTML_RE = re.compile(r'<li value="(\d+)">(?:<span[^>]*>[^<]*</span>)*<b>([^<]*)</b>')


def _numbers(text: str, ids: set[str]) -> dict[str, int]:
    """{rule id: number} of the numbered item lines (the verdict's lines name a location, not an id)."""
    found: dict[str, set[int]] = {}
    for m in [*FULL_RE.finditer(text), *SHORT_RE.finditer(text)]:
        if m.group(2) in ids:
            found.setdefault(m.group(2), set()).add(int(m.group(1)))
    assert all(len(v) == 1 for v in found.values()), found  # one number per item in one view
    return {k: v.pop() for k, v in found.items()}


@pytest.mark.skipif(not CAPTURE.is_dir(), reason="corpus absent")
def test_the_same_item_has_the_same_number_in_every_format(cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    d = str(CAPTURE)
    plan = cli("plan", d, "--format", "json").json()["data"]["plan"]
    capture = [i for i in plan if i["kind"] == "capture"]
    ranked = [i for i in plan if i["kind"] != "capture"]
    assert capture and len(ranked) >= 3, "the test needs a capture item and several ranked items"
    assert all(i["rank"] is None for i in capture)
    want = {i["id"]: i["rank"] for i in ranked}
    assert sorted(want.values()) == list(range(1, len(ranked) + 1))
    # the JSON order is the numbering order after the trust items
    assert [i["rank"] for i in ranked] == list(range(1, len(ranked) + 1))
    for args in (("plan", d), ("plan", d, "--format", "markdown"), ("plan", d, "--detail"),
                 ("analyze", d, "--plan")):
        got = _numbers(cli(*args).stdout, {i["id"] for i in plan})
        assert got == want, args
        assert not set(got) & {i["id"] for i in capture}, args  # trust items carry no number
    page = cli("analyze", d, "--plan", "--format", "html").stdout
    by_title = {html.unescape(m.group(2)): int(m.group(1)) for m in HTML_RE.finditer(page)}
    assert by_title == {i["title"]: i["rank"] for i in ranked}
    verdict = cli("plan", d, "--format", "json").json()["data"]["verdict"]["top_items"]
    assert {v["id"]: v["rank"] for v in verdict} == {k: v for k, v in want.items() if v <= len(verdict)}
