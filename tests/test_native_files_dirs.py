"""Fold.files opens each file of an absolute path relative to its folder, held open while
consecutive paths stay in it (hotspot/att/engine/_wavescan.c `read_file`; a relative path is opened
whole): between calls it must read exactly what opening the whole path reads. Paths that switch
folders, relative paths, `..`, a folder reached through a symlink, a file that is a symlink (left to
Python unread, as before), and a folder replaced between calls (nothing is held from one call to
the next; within one call the folder first opened is read, as the C comment says)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.test_native_files_guard import _needs_files
from tests.test_wavescan import mod  # noqa: F401  (fixture)


W1 = b'{"wave":{"begin":0,"end":100,"instructions":[[10,1,0,4,1],[20,2,0,4,2]],"timeline":[[1,50]]}}'
W2 = b'{"wave":{"begin":0,"end":100,"instructions":[[10,1,0,4,7],[20,2,0,4,8]],"timeline":[[1,50]]}}'


def _fold_knowing_w1(mod):
    """A Fold with W1's sequence registered: a W1 file is folded in C without an answer, a W2 file
    is handed back with its bytes."""
    fold = mod.Fold(1 << 20)
    scanned, gi = fold.wave(W1, 0)
    assert gi == -1
    fold.add_group(scanned[13], scanned[7], scanned[4], b"", 0, b"", b"", b"", [])
    return fold


def _answers(mod, paths: list[str]) -> list[tuple[int, bytes | None]]:
    """Fold.files over all the paths, called again past each answer: (index, bytes read or None
    when left to Python) of every file it answered."""
    fold = _fold_knowing_w1(mod)
    n = len(paths)
    got = []
    i = 0
    while True:
        at, data, _ = fold.files(paths, [0] * n, [0] * n, i, n, -1)
        if at == n:
            return got
        got.append((at, data))
        i = at + 1


def test_files_in_several_folders_read_as_their_whole_paths(mod, tmp_path, monkeypatch):
    _needs_files(mod)
    # the same file name in several folders, W1 in some, W2 in others: a file opened in the wrong
    # folder would be folded or answered wrongly
    for name, body in (("a", W1), ("b", W2), ("c", W1), ("d", W2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "w.json").write_bytes(body)
    (tmp_path / "a" / "v.json").write_bytes(W1)
    (tmp_path / "linked").symlink_to(tmp_path / "b")
    (tmp_path / "a" / "link.json").symlink_to(tmp_path / "b" / "w.json")
    monkeypatch.chdir(tmp_path / "a")
    t = str(tmp_path)
    paths = [t + "/a/w.json", t + "/a/v.json", t + "/b/w.json", t + "/a/w.json", t + "/c/w.json",
             t + "/d/w.json", "w.json", "../b/w.json", "../c/w.json", "v.json", t + "/linked/w.json",
             t + "/a/link.json", t + "/a/gone.json", t + "/a/", t + "/a/../d/w.json", t + "/a/w.json",
             t + "/c/w.json"]
    want = []
    for i, p in enumerate(paths):
        if os.path.islink(p.rstrip("/")) or not os.path.isfile(p):
            want.append((i, None))  # a link at the end, a missing file, a folder: left to Python
        elif Path(p).read_bytes() == W2:
            want.append((i, W2))
    assert _answers(mod, paths) == want


def test_a_folder_replaced_between_calls_is_read_anew(mod, tmp_path):
    _needs_files(mod)
    folder = tmp_path / "cap"
    folder.mkdir()
    (folder / "w.json").write_bytes(b'{"old":1}')
    path = str(folder / "w.json")
    fold = mod.Fold(1 << 20)
    assert fold.files([path], [0], [0], 0, 1, -1)[1] == b'{"old":1}'
    folder.rename(tmp_path / "was")
    folder.mkdir()
    (folder / "w.json").write_bytes(b'{"new":1}')
    assert fold.files([path], [0], [0], 0, 1, -1)[1] == b'{"new":1}'
