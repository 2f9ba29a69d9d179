"""The bundled example shows a real kernel source: every source line its ISA maps to is code, and the
code on it does what the instructions there do (loads on the load line, MFMAs on the MFMA line...)."""

from __future__ import annotations

import re
import orjson
import pytest

from hotspot.examples import example_dispatch_dir

# instruction prefix -> what the source line that issues it must mention
EXPECTED = [("v_mfma", r"mfma"), ("buffer_load", r"load"), ("buffer_store", r"store"),
            ("ds_write", r"\.store\("), ("ds_read", r"fragment"), ("ds_bpermute", r"lanes"),
            ("s_barrier", r"barrier\(\)")]


def _snapshot_lines() -> dict[str, list[str]]:
    ddir = example_dispatch_dir()
    tree = orjson.loads((ddir / "snapshots.json").read_bytes())
    out: dict[str, list[str]] = {}

    def walk(node: dict, parts: list[str]) -> None:
        for name, sub in node.items():
            if isinstance(sub, dict):
                walk(sub, [*parts, name])
            else:
                path = "/".join([*parts, name]).replace("//", "/")
                out[path] = (ddir / sub).read_text(encoding="utf-8").splitlines()

    walk(tree, [])
    return out


def _executed_rows() -> list[tuple[str, str, int]]:
    doc = orjson.loads((example_dispatch_dir() / "code.json").read_bytes())
    rows = []
    for row in doc["code"]:
        isa, source, hit = row[0], row[3], row[6]
        if hit and source and ":" in source and not isa.startswith(";"):
            path, _, line = source.rpartition(":")
            rows.append((isa, path, int(line)))
    return rows


def test_every_mapped_line_is_code() -> None:
    lines = _snapshot_lines()
    rows = _executed_rows()
    assert rows
    for isa, path, line in rows:
        text = lines[path][line - 1].strip()
        assert text and not text.startswith(("#", '"')), (isa, path, line, text)
        assert "synthetic source" not in text


@pytest.mark.parametrize("prefix, pattern", EXPECTED)
def test_line_does_what_its_instructions_do(prefix: str, pattern: str) -> None:
    lines = _snapshot_lines()
    hits = [(path, line) for isa, path, line in _executed_rows() if isa.startswith(prefix)]
    assert hits, prefix
    for path, line in hits:
        assert re.search(pattern, lines[path][line - 1]), (prefix, path, line, lines[path][line - 1])
