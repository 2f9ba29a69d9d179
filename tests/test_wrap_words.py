"""The one word wrapper of the text and markdown views (render/tables.py wrap_words): table cells,
prose (fit_text, fit_markdown) and the plan's verdict block all wrap through it."""

from __future__ import annotations

from hotspot.render.tables import fit_text, wrap_words


def test_short_text_is_one_line_after_its_indent():
    assert wrap_words("two words", 20) == ["two words"]
    assert wrap_words("two words", 20, indent="  ") == ["  two words"]
    assert wrap_words("", 20) == [""]


def test_breaks_between_words_and_hangs_the_continuations():
    assert wrap_words("alpha beta gamma delta", 11, hang="  ") == ["alpha beta", "  gamma", "  delta"]
    assert wrap_words("alpha beta gamma", 12, indent="- ", hang="  ") == ["- alpha beta", "  gamma"]


def test_a_word_longer_than_a_line_is_elided_never_split():
    # a path keeps its file name and line number (from the left); another word its start and end
    assert wrap_words("see /a/b/c/kernel.py:42 now", 16) == ["see", "…/c/kernel.py:42", "now"]
    assert wrap_words("x abcdefghijklmnopqrstuvwxyz", 9) == ["x", "abcd…wxyz"]
    # the room is the width less the hang, but no less than min_room
    assert wrap_words("abcdefghijklmnopqrstuvwxyz tail", 9, hang="    ") == ["ab…yz", "    tail"]
    assert wrap_words("abcdefghijklmnopqrstuvwxyz tail", 9, hang="    ", min_room=7) == ["abc…xyz", "    tail"]
    # markdown keeps a long word (a URL) whole
    assert wrap_words("x https://example.com/a/long/path", 10, cut_long_words=False) == [
        "x", "https://example.com/a/long/path"]


def test_fit_text_wraps_prose_under_its_label():
    out = fit_text("fix:  move the load of the next tile above the wait on this one", 30).split("\n")
    assert out == ["fix:  move the load of the", "      next tile above the wait", "      on this one"]
