"""A large code.json is parsed a piece at a time (hotspot/capture/codejson.py, issue 19): the table
must be the whole-document parse's, and every file the piecewise parse cannot prove (another
layout, strings that look like row boundaries, malformed JSON, rows no decoder writes) must read
exactly as before, errors included."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import hotspot.capture.codejson as cj
from hotspot.errors import HotspotError
from tests.conftest import CORPUS

HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"


def _whole(path: Path, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(cj, "PIECEWISE_MIN_BYTES", 1 << 62)
        try:
            return cj._read_code_json(path, None)
        except HotspotError as exc:
            return (type(exc), exc.code, exc.message, exc.hint)


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, piece: int):
    with monkeypatch.context() as m:
        m.setattr(cj, "PIECEWISE_MIN_BYTES", 0)
        m.setattr(cj, "PIECE_BYTES", piece)
        try:
            return cj._read_code_json(path, None)
        except HotspotError as exc:
            return (type(exc), exc.code, exc.message, exc.hint)


def _piecewise(path: Path, monkeypatch: pytest.MonkeyPatch, piece: int):
    """The piecewise parse alone (raises _NotPiecewise when it falls back)."""
    with monkeypatch.context() as m:
        m.setattr(cj, "PIECE_BYTES", piece)
        return cj._read_piecewise(path, path.read_bytes())


def _rows(n: int, isa=lambda i: f"v_add_f32 v{i % 7}, v1, v2", extra=()) -> list:
    code = [["; kern", 0, 0, "", 1, 0, 0, 0, 0, 0, *extra]]
    for i in range(1, n + 1):
        code.append([isa(i), 0, i, f"/src/k_{i % 3}.py:{i % 40 + 1}", 1, 4 * i, i % 2, 4 + i, i % 5,
                     0, *extra])
    return code


def _write(tmp_path: Path, doc: dict, option: int = 0, name: str = "code.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc, option=option))
    return path


PIECES = (1, 37, 400, 1 << 18)


def _corpus_code_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("code.json") if "legacy" not in str(p))


@pytest.mark.parametrize("path", _corpus_code_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_tables_are_the_whole_parse(corpus, path, monkeypatch):
    whole = _whole(path, monkeypatch)
    for piece in PIECES:
        assert _piecewise(path, monkeypatch, piece) == whole, piece


@pytest.mark.parametrize("option", [0, orjson.OPT_INDENT_2])
def test_boundaries_inside_strings_and_nested_arrays(tmp_path, monkeypatch, option):
    # ISA text and extra columns that look like row boundaries: the cuts there are disproved
    tricky = ['x],["y', 'a\\"],["b', '],[', 'q\\\\', '"],["', 'p"]]']
    code = _rows(300, isa=lambda i: tricky[i % len(tricky)] + f" {i}", extra=([[1, 2], [3, [4]]],))
    path = _write(tmp_path, {"code": code, "header": HEADER + ", Extra", "version": "3.0.0"}, option)
    whole = _whole(path, monkeypatch)
    assert len(whole.rows) == 300 and whole.rows[5].extra == {"Extra": [[1, 2], [3, [4]]]}
    for piece in PIECES:
        assert _piecewise(path, monkeypatch, piece) == whole, piece


def test_last_row_with_a_string_boundary(tmp_path, monkeypatch):
    code = _rows(50)
    code[-1][0] = 'v_mov ],["z'
    path = _write(tmp_path, {"code": code, "header": HEADER, "version": "3.0.0"})
    whole = _whole(path, monkeypatch)
    for piece in PIECES:
        assert _read(path, monkeypatch, piece) == whole


@pytest.mark.parametrize("doc", [
    {"header": HEADER, "code": _rows(60), "version": "3.0.0"},            # code not first
    {"code": _rows(60), "header": HEADER, "version": "3.0.0", "x": {"code": [["a"], ["b"]]}},
    {"code": _rows(60), "header": HEADER, "version": "2.0.0"},             # warning kept
    {"code": _rows(60), "header": HEADER},                                 # no version
    {"code": _rows(60), "header": "ISA, _, Line", "version": "3.0.0"},      # short header
    {"code": _rows(60), "header": HEADER.replace("Hit", "Hits"), "version": "3.0.0"},
    {"code": [r[:8] for r in _rows(60)]},                                  # legacy rows
    {"code": _rows(60) + [["v_x", 0, 7, "", 1, 0, 0, 0, 0, 0]], "header": HEADER, "version": "3.0.0"},
    {"code": _rows(60)[:30] + [["v_x", 0, 999, "", 1, -1, 0, 0, 0, 0]] + _rows(60)[30:],
     "header": HEADER, "version": "3.0.0"},                                # a value out of range
    {"code": _rows(60)[:30] + [["v_x", 0, 998, "", 1, 0, 1.5, 0, 0, 0]] + _rows(60)[30:],
     "header": HEADER, "version": "3.0.0"},
    {"code": _rows(60)[:30] + [7] + _rows(60)[30:], "header": HEADER, "version": "3.0.0"},
], ids=["code-not-first", "nested-code-key", "other-version", "no-version", "short-header",
        "bad-header-name", "legacy", "duplicate-line", "out-of-range", "float", "not-a-row"])
def test_other_shapes_read_as_before(tmp_path, monkeypatch, doc):
    path = _write(tmp_path, doc)
    whole = _whole(path, monkeypatch)
    for piece in PIECES:
        assert _read(path, monkeypatch, piece) == whole, piece


def test_duplicate_code_key_reads_as_before(tmp_path, monkeypatch):
    body = orjson.dumps({"code": _rows(40), "header": HEADER, "version": "3.0.0"})
    path = tmp_path / "code.json"
    path.write_bytes(body[:-1] + b',"code":' + orjson.dumps(_rows(20)) + b"}")
    whole = _whole(path, monkeypatch)
    assert len(whole.rows) == 20
    for piece in PIECES:
        assert _read(path, monkeypatch, piece) == whole


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.999])
def test_truncated_file_gives_the_same_error(tmp_path, monkeypatch, cut):
    body = orjson.dumps({"code": _rows(200), "header": HEADER, "version": "3.0.0"})
    path = tmp_path / "code.json"
    path.write_bytes(body[:int(len(body) * cut)])
    whole = _whole(path, monkeypatch)
    assert whole[1] == "malformed-json"
    for piece in PIECES:
        assert _read(path, monkeypatch, piece) == whole


def test_large_file_is_read_piecewise(tmp_path, monkeypatch):
    """The real size threshold: a file over PIECEWISE_MIN_BYTES takes the piecewise path."""
    n = cj.PIECEWISE_MIN_BYTES // 60
    path = _write(tmp_path, {"code": _rows(n), "header": HEADER, "version": "3.0.0"})
    assert path.stat().st_size >= cj.PIECEWISE_MIN_BYTES
    seen = []
    real = cj._pieces

    def pieces(*args):
        for rows in real(*args):
            seen.append(len(rows))
            yield rows

    monkeypatch.setattr(cj, "_pieces", pieces)
    table = cj._read_code_json(path, None)
    assert len(table.rows) == n and len(seen) > 1 and sum(seen) == n  # the last row: skeleton
    assert table.rows[0].source is table.rows[120].source  # one SourceLoc per distinct Source
