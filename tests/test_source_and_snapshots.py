"""Source strings (chains, unknown lines) and snapshots.json resolution confined to the dir."""

from __future__ import annotations

from hotspot.capture.snapshots import build_source_map, flatten
from hotspot.capture.source import parse_source


def test_plain_and_unknown_lines():
    s = parse_source("/src/k.py:64")
    assert (s.file, s.line, s.chain) == ("/src/k.py", 64, ())
    s = parse_source("x.hip:?")
    assert (s.file, s.line) == ("x.hip", None)
    assert parse_source("") is None


def test_inline_chain_attributed_to_leaf():
    s = parse_source("a.h:258 -> b.h:317 -> x.hip:40")
    assert (s.file, s.line) == ("a.h", 258)
    assert s.chain == ("a.h:258", "b.h:317", "x.hip:40")


def test_flatten_with_dotdot_and_relative():
    tree = {"/": {"opt": {"bin": {"..": {"inc": {"h.h": "source_0_h.h"}}}}},
            "rel": {"k.py": "source_1_k.py"}}
    assert sorted(flatten(tree)) == [("/opt/bin/../inc/h.h", "source_0_h.h"),
                                     ("rel/k.py", "source_1_k.py")]


def test_source_map_confined_to_dispatch_dir(tmp_path):
    d = tmp_path / "ui"
    d.mkdir()
    (d / "source_0_k.py").write_text("a\nb\n")
    (tmp_path / "secret.txt").write_text("no")
    tree = {"/": {"src": {"k.py": "source_0_k.py", "evil.py": "../secret.txt"}}}
    smap = build_source_map(d, tree, d / "snapshots.json")
    assert smap.lookup("/src/k.py") == (d / "source_0_k.py").resolve()
    assert smap.lookup("/src/evil.py") is None
    assert any("outside the dispatch dir" in w for w in smap.warnings)
    # normalized lookup: a/../b == b
    assert smap.lookup("/src/x/../k.py") == (d / "source_0_k.py").resolve()


def test_missing_snapshot_file_degrades(tmp_path):
    d = tmp_path / "ui"
    d.mkdir()
    smap = build_source_map(d, {"/": {"k.py": "source_0_k.py"}}, d / "snapshots.json")
    assert smap.has("/k.py") and smap.lookup("/k.py") is None


def test_source_map_reads_sources_from_a_local_checkout(cli, tmp_path, monkeypatch):
    from tests.test_diff import _dispatch

    d = _dispatch(tmp_path / "cap" / "ui_output_agent_1_dispatch_1", 400)  # sources named /src/k.py
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    lines = [f"source line {n}" for n in range(1, 41)]
    (checkout / "k.py").write_text("\n".join(lines) + "\n")
    monkeypatch.delenv("HOTSPOT_SOURCE_MAP", raising=False)

    def detail(*extra):
        run = cli("analyze", d, "--detail", "--format", "json", *extra)
        assert run.exit_code == 0, run.stderr
        return {(x["file"], x["line"]): x for x in run.json()["data"]["detail"]}

    without = detail()
    assert without and not any(x["source_available"] for x in without.values())
    mapped = detail("--source-map", f"/src={checkout}")
    hot = mapped[("/src/k.py", 23)]
    assert hot["source_found"] == "source-map" and hot["source_path"] == str(checkout / "k.py")
    assert [s["text"] for s in hot["snippet"]] == lines[23 - 4:23 + 3]
    assert [s["line"] for s in hot["snippet"] if s["hot"]] == [23]
    monkeypatch.setenv("HOTSPOT_SOURCE_MAP", f"/elsewhere=/nowhere:/src={checkout}")
    assert detail()[("/src/k.py", 23)]["source_found"] == "source-map"
    text = cli("analyze", d, "--detail")
    assert "--source-map)" in text.stdout and "source line 23" in text.stdout
    bad = cli("analyze", d, "--detail", "--source-map", "no-equals-sign", "--format", "json")
    assert bad.exit_code == 2 and bad.json()["error"]["code"] == "usage"


def test_report_reads_sources_from_a_local_checkout(cli, tmp_path, monkeypatch):
    """`report --source-map` shows the source text around each line in its panel, says where it came
    from, and counts the files found; without it the page and a warning say how to get them."""
    import html

    from tests.test_diff import _dispatch

    d = _dispatch(tmp_path / "cap" / "ui_output_agent_1_dispatch_1", 400)  # sources named /src/k.py
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "k.py").write_text("\n".join(f"source line {n} <b>" for n in range(1, 41)) + "\n")
    monkeypatch.delenv("HOTSPOT_SOURCE_MAP", raising=False)

    bare = cli("report", d, "-o", tmp_path / "bare.html", "--format", "json")
    assert bare.exit_code == 0, bare.stderr
    doc = bare.json()
    assert doc["data"]["source_files"] == 1 and doc["data"]["source_files_found"] == 0
    assert any("--source-map" in w for w in doc["warnings"])
    page = (tmp_path / "bare.html").read_text()
    assert "source not available" in page and "Source text: 0 of 1 files found" in page

    run = cli("report", d, "-o", tmp_path / "mapped.html", "--source-map", f"/src={checkout}",
              "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["data"]["source_files_found"] == 1
    assert not any("--source-map" in w for w in run.json()["warnings"])
    page = (tmp_path / "mapped.html").read_text()
    assert "Source text: 1 of 1 files found" in page
    assert html.escape(f"from {checkout / 'k.py'} (--source-map)") in page
    assert '<span class="hot">    23 | source line 23 &lt;b&gt;</span>' in page  # escaped, marked hot
    text = cli("report", d, "-o", tmp_path / "t.html", "--source-map", f"/src={checkout}")
    assert "source text of 1 of 1 files" in text.stdout
