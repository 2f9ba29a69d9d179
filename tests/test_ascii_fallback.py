"""Text output on a stdout whose encoding cannot print `…—█` (PYTHONIOENCODING=ascii, a C locale):
the same page with each such character replaced by one ASCII character, never an internal error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hotspot.diagnostics import printable_in


def test_known_characters_fold_one_for_one_and_others_become_a_question_mark() -> None:
    assert printable_in("a…b — c █▌ 3×4 ≥2 µs", "ascii") == "a~b - c #+ 3x4 >2 us"
    assert printable_in("漢", "ascii") == "?"
    # only what the encoding cannot print changes: latin-1 prints µ and ×
    assert printable_in("µs × 2…", "latin-1") == "µs × 2~"
    text = "already printable … in UTF-8"
    assert printable_in(text, "utf-8") is text
    assert printable_in(text, None) is text


def _hotspot(*args: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "80"}
    env.pop("HOTSPOT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "hotspot", "--no-cache", *args], capture_output=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("args", [("analyze", "--example", "--brief"), ("analyze", "--example")])
def test_an_ascii_stdout_gets_the_same_page_in_ascii(args: tuple[str, ...]) -> None:
    utf8 = _hotspot(*args, encoding="utf-8")
    ascii_ = _hotspot(*args, encoding="ascii")
    assert utf8.returncode == ascii_.returncode == 0, ascii_.stderr.decode()
    assert b"internal error" not in ascii_.stderr
    page, folded = utf8.stdout.decode("utf-8"), ascii_.stdout.decode("ascii")  # ascii: or it raises
    assert any(ord(c) > 127 for c in page)  # the page does use characters beyond ASCII
    # one for one: same lines, same widths, ASCII characters unchanged
    assert len(page) == len(folded)
    assert all(a == b for a, b in zip(page, folded) if ord(a) < 128)
