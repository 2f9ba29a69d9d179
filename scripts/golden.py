#!/usr/bin/env python3
"""Golden outputs: every read-only hotspot command in every format over the real-profiler corpus and
the bundled example, recorded to a folder, so two trees can be compared byte for byte (docs/golden.md).

    golden.py --out DIR                      record with this tree
    golden.py --baseline COMMIT --out DIR    record with COMMIT (a `git archive` of it, native
                                             scanner built in place, run with PYTHONPATH)
    golden.py --compare A B                  list the differences; exit 1 if any

Each case gets a folder DIR/<case>/ holding `argv` (the command line), `stdout`, `stderr`,
`exit_code` and every file the command wrote (-o). The tree's path, the corpus path and the
case's scratch folder are replaced by <TREE>, <CORPUS> and <CWD> in everything recorded, so
records made from different checkouts compare. Nothing is skipped silently: a case that could not
run records why in its `exit_code` file (e.g. `timeout`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import difflib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = (REPO / ".." / "shared" / "corpus").resolve()
CASE_TIMEOUT_S = 900
STAGE = Path(tempfile.gettempdir()) / "hotspot-golden"
# Files a case writes that are not command output (the manifest says how the record was made)
MANIFEST = "manifest.json"
TEXT_FORMATS = ("text", "json", "markdown")
ALL_FORMATS = ("text", "json", "markdown", "html")


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]  # after `hotspot --no-cache`
    outputs: tuple[str, ...] = field(default=())  # files the command writes into its cwd


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "~", text).strip("~")


def _target_label(path: Path, corpus: Path, tree: Path) -> str:
    for root, label in ((corpus, "corpus"), (tree, "tree")):
        try:
            return f"{label}~{_slug(str(path.relative_to(root)))}"
        except ValueError:
            continue
    return _slug(str(path))


def ui_dirs(corpus: Path) -> list[Path]:
    """Every ATT dispatch folder: a folder holding code.json."""
    return sorted(p.parent for p in (corpus / "att").rglob("code.json")) + sorted(
        p.parent for p in (corpus / "layouts").rglob("code.json"))


def multi_dispatch_parents(dirs: list[Path]) -> list[Path]:
    """Folders directly holding two or more dispatch folders (`analyze --all` input)."""
    counts: dict[Path, int] = {}
    for d in dirs:
        counts[d.parent] = counts.get(d.parent, 0) + 1
    return sorted(p for p, n in counts.items() if n >= 2)


def kernel_inputs(corpus: Path) -> list[Path]:
    """Kernel trace/stats CSVs and rocpd databases (`hotspot kernels` input)."""
    found = [p for p in corpus.rglob("*.csv")
             if re.search(r"kernel_(trace|stats|names)", p.name) and "ui_output" not in str(p)]
    found += list(corpus.rglob("*_results.db"))
    return sorted(found)


def pmc_inputs(corpus: Path) -> list[Path]:
    """rocprof-compute workload folders and rocprofv3 counter-collection CSVs (`hotspot pmc`)."""
    folders = sorted(p for p in (corpus / "pmc").iterdir() if p.is_dir())
    csvs = sorted(p for p in corpus.rglob("*counter_collection.csv"))
    return folders + csvs


OCCUPANCY_CONFIGS: tuple[tuple[str, ...], ...] = (
    ("--arch", "gfx942", "--vgpr", "128", "--agpr", "384", "--lds", "65536", "--wg", "256"),
    ("--arch", "gfx950", "--vgpr", "256", "--sgpr", "80", "--lds", "163840", "--wg", "512"),
    ("--arch", "gfx90a", "--vgpr", "64", "--wg", "1024"),
    ("--arch", "gfx908", "--vgpr", "100", "--agpr", "28", "--lds", "40000", "--wg", "128"),
    ("--arch", "MI300X", "--vgpr", "512", "--wg", "64"),  # over the limit: the error path
)


def build_cases(corpus: Path, tree: Path) -> list[Case]:
    cases: list[Case] = []

    def add(argv: tuple[str, ...], outputs: tuple[str, ...] = ()) -> None:
        cases.append(Case(_case_name(argv, corpus, tree), argv, outputs))

    example_run = tree / "hotspot" / "examples" / "data" / "example_run"
    dirs = ui_dirs(corpus)
    for fmt in ALL_FORMATS:
        add(("analyze", "--example", "--format", fmt))
    for fmt in ALL_FORMATS:
        add(("analyze", "--example", "--plan", "--detail", "--format", fmt))
    for target in [*dirs, example_run]:
        t = str(target)
        for fmt in ALL_FORMATS:
            add(("analyze", t, "--format", fmt))
            add(("analyze", t, "--plan", "--detail", "--format", fmt))
        for fmt in TEXT_FORMATS:
            add(("plan", t, "--format", fmt))
        for fmt in ("text", "json"):
            add(("plan", t, "--brief", "--format", fmt))
        add(("report", t, "-o", "report.html"), ("report.html",))
        add(("export", "perfetto", t, "-o", "trace.json"), ("trace.json",))
    for parent in multi_dispatch_parents(dirs):
        for fmt in ALL_FORMATS:
            add(("analyze", str(parent), "--all", "--format", fmt))
        for fmt in TEXT_FORMATS:
            add(("analyze", str(parent), "--all", "--plan", "--format", fmt))
    big = sorted(p for p in dirs if p.parent.name == "big" and "flash_attn" in str(p))
    vec_add = corpus / "att" / "gfx950" / "vec_add"
    pairs = [(vec_add, vec_add)] + ([(big[0], big[1])] if len(big) >= 2 else [])
    for before, after in pairs:
        for fmt in TEXT_FORMATS:
            add(("diff", str(before), str(after), "--format", fmt))
    for path in pmc_inputs(corpus):
        for fmt in TEXT_FORMATS:
            add(("pmc", str(path), "--format", fmt))
        add(("pmc", str(path), "--per-dispatch", "--format", "json"))
    for path in kernel_inputs(corpus):
        for fmt in TEXT_FORMATS:
            add(("kernels", str(path), "--format", fmt))
    markers = corpus / "csv" / "kernel_trace.csv"
    if markers.is_file():
        add(("kernels", str(markers), "--by-marker", "--format", "json"))
    for config in OCCUPANCY_CONFIGS:
        for fmt in TEXT_FORMATS:
            add(("occupancy", *config, "--format", fmt))
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "two cases share a folder name"
    return cases


def _case_name(argv: tuple[str, ...], corpus: Path, tree: Path) -> str:
    parts = []
    for arg in argv:
        p = Path(arg)
        parts.append(_target_label(p, corpus, tree) if p.is_absolute() else _slug(arg))
    return "_".join(parts)


# A progress line of work over a second (hotspot/diagnostics.py Progress): whether and when it
# prints depends on the machine's load, so it is left out of the recorded stderr.
PROGRESS_LINE = re.compile(rb"^[^\n]*: [\d,]+/[\d,]+[^\n]*(?: \(\d+%\))?, \d+ s\n", re.MULTILINE)


def _normalise(data: bytes, subs: list[tuple[str, str]]) -> bytes:
    for old, new in subs:
        data = data.replace(old.encode(), new.encode())
    return data


def run_case(case: Case, python: str, tree: Path, corpus: Path, out: Path) -> tuple[str, float]:
    folder = out / case.name
    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="golden-") as scratch:
        cwd = Path(scratch) / "cwd"
        cwd.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PYTHONPATH")}
        env.update(PYTHONPATH=str(tree), HOTSPOT_CACHE="off", XDG_CACHE_HOME=str(Path(scratch) / "cache"),
                   TMPDIR=scratch, PYTHONHASHSEED="0")
        argv = [python, "-m", "hotspot", "--no-cache", *case.argv]
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=CASE_TIMEOUT_S)
            code, stdout, stderr = str(proc.returncode), proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, stdout, stderr = f"timeout after {CASE_TIMEOUT_S} s", exc.stdout or b"", exc.stderr or b""
        elapsed = time.monotonic() - start
        subs = [(str(cwd), "<CWD>"), (str(scratch), "<TMP>"), (str(tree), "<TREE>"), (str(corpus), "<CORPUS>")]
        (folder / "argv").write_bytes(_normalise(" ".join(["hotspot", "--no-cache", *case.argv]).encode() + b"\n", subs))
        (folder / "stdout").write_bytes(_normalise(stdout, subs))
        (folder / "stderr").write_bytes(_normalise(PROGRESS_LINE.sub(b"", stderr), subs))
        (folder / "exit_code").write_text(code + "\n")
        for name in case.outputs:
            produced = cwd / name
            target = folder / f"file~{name}"
            if produced.is_file():
                target.write_bytes(_normalise(produced.read_bytes(), subs))
            else:
                target.write_text("(not written)\n")
    return code, elapsed


def _tree_facts(python: str, tree: Path) -> dict[str, str]:
    """Which hotspot the runs import, and whether the native wave scanner is in use there."""
    probe = ("import hotspot, importlib.util as u; print(hotspot.__file__); "
             "print(u.find_spec('hotspot.att.engine._wavescan') is not None)")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    lines = subprocess.run([python, "-c", probe], env=env, capture_output=True, text=True, check=True,
                           cwd=tempfile.gettempdir()).stdout.split()
    imported = Path(lines[0]).resolve()
    if not imported.is_relative_to(tree.resolve()):
        raise SystemExit(f"golden: {python} imports hotspot from {imported}, not from {tree}")
    return {"hotspot_module": str(imported), "native_wavescan": lines[1]}


@contextlib.contextmanager
def staged(source: Path) -> Iterator[Path]:
    """The tree's hotspot/ package copied to one fixed path for the whole recording. Text output
    shortens long paths to fit the width ("…/examples/data/..."), so the bundled example's path
    must have the same length and components whichever checkout is recorded; hotspot resolves
    symlinks, so a link would not do. One recording at a time holds the place (a lock)."""
    STAGE.mkdir(exist_ok=True)
    with open(STAGE / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"golden: waiting for another recording to release {STAGE}", file=sys.stderr)
            fcntl.flock(lock, fcntl.LOCK_EX)
        tree = STAGE / "tree"
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(source / "hotspot", tree / "hotspot", ignore=shutil.ignore_patterns("__pycache__"))
        try:
            yield tree
        finally:
            shutil.rmtree(tree, ignore_errors=True)


def record(source: Path, corpus: Path, out: Path, jobs: int, label: str, only: str | None) -> int:
    if out.exists() and any(out.iterdir()):
        print(f"golden: {out} is not empty; give a new folder (nothing is overwritten)", file=sys.stderr)
        return 2
    if not corpus.is_dir():
        print(f"golden: corpus not found at {corpus} (--corpus PATH)", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    with staged(source) as tree:
        return _record(source, tree, corpus, out, jobs, label, only)


def _record(source: Path, tree: Path, corpus: Path, out: Path, jobs: int, label: str, only: str | None) -> int:
    python = sys.executable
    facts = _tree_facts(python, tree)
    cases = build_cases(corpus, tree)
    if only:
        cases = [c for c in cases if re.search(only, c.name)]
        label += f" (only cases matching {only!r})"
    print(f"golden: {len(cases)} cases of {label} with {jobs} worker(s) -> {out}", file=sys.stderr)
    start = time.monotonic()
    timings: dict[str, float] = {}
    codes: dict[str, str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_case, c, python, tree, corpus, out): c for c in cases}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            case = futures[future]
            codes[case.name], timings[case.name] = future.result()
            if done % 50 == 0 or done == len(cases):
                print(f"golden: {done}/{len(cases)} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    slowest = sorted(timings.items(), key=lambda kv: -kv[1])[:10]
    manifest = {
        "recorded_from": label, "source": str(source), "staged_at": str(tree), "corpus": str(corpus), "python": python,
        **facts, "cases": len(cases), "wall_s": round(time.monotonic() - start, 1),
        "exit_codes": dict(sorted(codes.items())),
        "slowest_s": {k: round(v, 2) for k, v in slowest},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    odd = [n for n, c in codes.items() if not c.isdigit()]
    for name in odd:
        print(f"golden: {name}: {codes[name]}", file=sys.stderr)
    print(f"golden: recorded {len(cases)} cases in {manifest['wall_s']} s", file=sys.stderr)
    return 1 if odd else 0


def record_baseline(commit: str, corpus: Path, out: Path, jobs: int, only: str | None) -> int:
    with tempfile.TemporaryDirectory(prefix="golden-baseline-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True)
        if archive.returncode != 0:
            print(f"golden: git archive {commit}: {archive.stderr.decode().strip()}", file=sys.stderr)
            return 2
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
        # The native wave scanner, built from that commit's source next to it (as an editable install
        # does); without a compiler hotspot reads in Python and the manifest says so.
        build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=src,
                               capture_output=True, text=True)
        if build.returncode != 0:
            print(f"golden: native scanner not built for {commit} (pure Python):\n{build.stderr[-2000:]}",
                  file=sys.stderr)
        sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", commit], capture_output=True,
                             text=True, check=True).stdout.strip()
        return record(src, corpus, out, jobs, f"commit {sha}", only)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != MANIFEST}


def compare(a: Path, b: Path, context_lines: int) -> int:
    for root in (a, b):
        if not (root / MANIFEST).is_file():
            print(f"golden: {root} is not a golden record (no {MANIFEST})", file=sys.stderr)
            return 2
    fa, fb = _files(a), _files(b)
    differences = 0
    for rel in sorted(fa - fb):
        print(f"only in {a}: {rel}")
        differences += 1
    for rel in sorted(fb - fa):
        print(f"only in {b}: {rel}")
        differences += 1
    for rel in sorted(fa & fb):
        da, db = (a / rel).read_bytes(), (b / rel).read_bytes()
        if da == db:
            continue
        differences += 1
        print(f"differs: {rel}")
        if context_lines:
            lines = list(difflib.unified_diff(da.decode(errors="replace").splitlines(),
                                              db.decode(errors="replace").splitlines(),
                                              str(a / rel), str(b / rel), n=1, lineterm=""))
            for line in lines[:context_lines]:
                print(f"    {line[:300]}")
            if len(lines) > context_lines:
                print(f"    ... {len(lines) - context_lines} more diff lines")
    cases = {rel.split("/", 1)[0] for rel in fa | fb}
    print(f"golden: {differences} difference(s) over {len(cases)} cases", file=sys.stderr)
    return 1 if differences else 0


# --itemize: every difference grouped by (command, format, where in the output), with a count of
# cases and one example each, so two records' differences can be listed mechanically.
ITEM_EXAMPLE_CHARS = 160
HEADING_CHARS = 80  # a section named by a kernel's whole template name is cut
FLAGS_NOT_VARIANTS = frozenset({"--format", "--example", "-o"})  # input/output choices, not views
# section headings of a page: h2-h4 (h1 is the page's title, with the kernel's name), their
# subtitles and paths (a <span> inside) left out, so one change in every page is one group
HTML_HEADING = re.compile(r"<h([2-4])\b[^>]*>(.*?)</h\1>", re.DOTALL)
HEADING_SPAN = re.compile(r"<span\b[^>]*>.*?</span>", re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def _argv_tokens(folder: Path) -> list[str]:
    words = (folder / "argv").read_text().split() if (folder / "argv").is_file() else []
    return words[2:] if words[:2] == ["hotspot", "--no-cache"] else words


def case_command(folder: Path) -> str:
    """The command and the flags that choose its view (`analyze --plan --detail`), values left out."""
    tokens = _argv_tokens(folder)
    if not tokens:
        return folder.name
    head = tokens[:2] if tokens[0] == "export" and len(tokens) > 1 else tokens[:1]
    flags = [t for t in tokens[len(head):] if t.startswith("-") and t not in FLAGS_NOT_VARIANTS]
    return " ".join(head + flags)


def case_format(folder: Path, name: str) -> str:
    """What a recorded file is: stdout in the case's --format (text by default), a written file by
    its extension, or `stderr` / `exit_code`."""
    if name == "stdout":
        tokens = _argv_tokens(folder)
        i = tokens.index("--format") if "--format" in tokens else -1
        return tokens[i + 1] if 0 <= i < len(tokens) - 1 else "text"
    if name.startswith("file~"):
        return Path(name).suffix.lstrip(".") or name
    return name


def _short(value: object, limit: int = ITEM_EXAMPLE_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")  # one example, one line
    return text if len(text) <= limit else text[:limit - 1] + "…"


def json_differences(a: object, b: object, path: str = "") -> dict[str, tuple[object, object]]:
    """Each place two JSON values differ, by key path (`data.plan.items[].coverage`: list indices
    as `[]`), with the first pair of values seen there. Keys on one side only, lists of another
    length and keys in another order are places of their own (`... (only in B)`, `...[] (length)`,
    `... (key order)`)."""
    out: dict[str, tuple[object, object]] = {}
    here = path or "(document)"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                out.setdefault(f"{path}.{k} (only in A)".lstrip("."), (a[k], None))
        for k in b:
            if k not in a:
                out.setdefault(f"{path}.{k} (only in B)".lstrip("."), (None, b[k]))
        for k in a:
            if k in b:
                for where, pair in json_differences(a[k], b[k], f"{path}.{k}".lstrip(".")).items():
                    out.setdefault(where, pair)
        common_a = [k for k in a if k in b]
        common_b = [k for k in b if k in a]
        if common_a != common_b:
            out.setdefault(f"{here} (key order)", (common_a, common_b))
    elif isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b):
            for where, pair in json_differences(x, y, f"{path}[]").items():
                out.setdefault(where, pair)
        if len(a) != len(b):
            out.setdefault(f"{path}[] (length)", (len(a), len(b)))
    elif a != b or type(a) is not type(b):  # 1 and 1.0 (or true) are other bytes
        out[here] = (a, b)
    return out


def text_headings(lines: list[str], fmt: str) -> list[str]:
    """The section heading each line is under: a markdown `#` line, or a text heading (a title
    underlined with dashes, render/tables.py `heading`); `(top)` before the first."""
    out, current = [], "(top)"
    for i, line in enumerate(lines):
        if fmt == "markdown" and line.startswith("#"):
            current = line.lstrip("#").strip()
        elif fmt != "markdown" and i + 1 < len(lines) and line.strip() \
                and set(lines[i + 1].strip()) == {"-"} and len(lines[i + 1].strip()) == len(line.strip()):
            current = line.strip()
        out.append(current)
    return out


def html_headings(chunks: list[str]) -> list[str]:
    """The section each chunk of a page (split after every `>`) is in: the last <h2>-<h4> that ends
    at or before the chunk's end (its text outside nested spans), `<style>`/`<script>` inside one,
    `(top)` before the first heading."""
    text = "".join(chunks)
    heads = [(m.end(), _short(" ".join(TAG.sub("", HEADING_SPAN.sub("", m.group(2))).split()),
                              HEADING_CHARS)) for m in HTML_HEADING.finditer(text)]
    blocks = [(m.start(), m.end(), m.group(1)) for m in
              re.finditer(r"<(style|script)\b.*?</\1>", text, re.DOTALL)]
    out, pos, h, b = [], 0, 0, 0
    current = "(top)"
    for chunk in chunks:
        pos += len(chunk)
        while h < len(heads) and heads[h][0] <= pos:
            current = heads[h][1]
            h += 1
        while b < len(blocks) and blocks[b][1] < pos:
            b += 1
        inside = b < len(blocks) and blocks[b][0] < pos <= blocks[b][1]
        out.append(f"<{blocks[b][2]}>" if inside else current)
    return out


# Above this many items between the common head and tail, the matcher may skip popular items
# (difflib's autojunk) to stay fast: the stretches it finds are then coarser, never missed.
EXACT_DIFF_ITEMS = 5000


def _hunks(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """(i1, i2, j1, j2) of every place `a` and `b` differ. The common head and tail are taken off
    first: a page of 40,000 tags that differs in two places is then a small match."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    ma, mb = a[head:len(a) - tail], b[head:len(b) - tail]
    matcher = difflib.SequenceMatcher(None, ma, mb, autojunk=max(len(ma), len(mb)) > EXACT_DIFF_ITEMS)
    return [(i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _where(heads_a: list[str], heads_b: list[str], i2: int, j2: int) -> str:
    """A hunk's section: where it ends in B (an inserted section is under its own heading), or in A
    when B lost the lines."""
    if j2 > 0:
        return heads_b[j2 - 1]
    return heads_a[i2 - 1] if i2 > 0 else "(top)"


def file_differences(da: bytes, db: bytes, fmt: str) -> dict[str, tuple[object, object]]:
    """Where one recorded file differs: for JSON every key path (json_differences); for text,
    markdown and HTML the section of every differing stretch (text_headings / html_headings), with
    its first lines on each side; for stderr the kind of each differing line."""
    if fmt == "exit_code":
        return {"exit code": (da.decode(errors="replace").strip(), db.decode(errors="replace").strip())}
    if fmt == "json":
        try:
            ja, jb = json.loads(da), json.loads(db)
        except ValueError:
            pass
        else:
            return json_differences(ja, jb) or {"(formatting)": (_short(da.decode(errors="replace")),
                                                                 _short(db.decode(errors="replace")))}
    ta, tb = da.decode(errors="replace"), db.decode(errors="replace")
    if fmt == "html":
        la, lb = re.split(r"(?<=>)", ta), re.split(r"(?<=>)", tb)
        heads_a, heads_b = html_headings(la), html_headings(lb)
    else:
        la, lb = ta.splitlines(), tb.splitlines()
        heads_a, heads_b = text_headings(la, fmt), text_headings(lb, fmt)
    out: dict[str, tuple[object, object]] = {}
    for i1, i2, j1, j2 in _hunks(la, lb):
        sep = "" if fmt == "html" else "\n"
        pair = (sep.join(la[i1:i2]) or "(none)", sep.join(lb[j1:j2]) or "(none)")
        if fmt == "stderr":  # diagnostics, not sections: the kind of line (`warning: resources`)
            line = (la[i1] if i1 < i2 else lb[j1])
            where = ": ".join(line.split(": ")[:2])[:60] or "(empty line)"
        else:
            where = f"§ {_where(heads_a, heads_b, i2, j2)}"
        out.setdefault(where, pair)
    return out


@dataclass
class Item:
    """One group of differences: how many cases show it and the first one seen."""

    cases: set[str] = field(default_factory=set)
    example_case: str = ""
    example: tuple[object, object] = (None, None)


def itemize(a: Path, b: Path) -> dict[tuple[str, str, str], Item]:
    """Every difference between two records, by (command, format, where)."""
    fa, fb = _files(a), _files(b)
    items: dict[tuple[str, str, str], Item] = {}

    def add(key: tuple[str, str, str], case: str, pair: tuple[object, object]) -> None:
        item = items.setdefault(key, Item())
        if not item.cases or case < item.example_case:
            item.example_case, item.example = case, pair
        item.cases.add(case)
    for rel in sorted(fa ^ fb):
        case, name = rel.split("/", 1) if "/" in rel else (rel, rel)
        folder = (a if rel in fa else b) / case
        side = "A" if rel in fa else "B"
        add((case_command(folder), case_format(folder, name), f"(file only in {side})"), case, ("", ""))
    for rel in sorted(fa & fb):
        da, db = (a / rel).read_bytes(), (b / rel).read_bytes()
        if da == db or "/" not in rel:
            continue
        case, name = rel.split("/", 1)
        folder = a / case
        fmt = case_format(folder, name)
        for where, pair in file_differences(da, db, fmt).items():
            add((case_command(folder), fmt, where), case, pair)
    return items


def print_itemized(items: dict[tuple[str, str, str], Item]) -> None:
    for (command, fmt, where), item in sorted(items.items()):
        print(f"{command} | {fmt} | {where}: {len(item.cases)} case(s)")
        x, y = item.example
        print(f"    e.g. {item.example_case}")
        print(f"      A: {_short(x)}")
        print(f"      B: {_short(y)}")


def compare_itemized(a: Path, b: Path) -> int:
    for root in (a, b):
        if not (root / MANIFEST).is_file():
            print(f"golden: {root} is not a golden record (no {MANIFEST})", file=sys.stderr)
            return 2
    items = itemize(a, b)
    print_itemized(items)
    cases = set().union(*(item.cases for item in items.values())) if items else set()
    print(f"golden: {len(items)} kind(s) of difference over {len(cases)} case(s)", file=sys.stderr)
    return 1 if items else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="folder to record into (must be new or empty)")
    parser.add_argument("--baseline", metavar="COMMIT", help="record this commit instead of this tree")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two records")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default {DEFAULT_CORPUS}")
    parser.add_argument("--only", metavar="REGEX",
                        help="record only the cases whose folder name matches REGEX (a partial record)")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    parser.add_argument("--diff-lines", type=int, default=12,
                        help="lines of unified diff shown per differing file with --compare (0: none)")
    parser.add_argument("--itemize", action="store_true",
                        help="with --compare: group every difference by command, format and where "
                             "(JSON key path, or the section heading above the first differing line), "
                             "with a count of cases and one example each")
    args = parser.parse_args(argv)
    if args.itemize and not args.compare:
        parser.error("--itemize goes with --compare A B")
    if args.compare:
        if args.out or args.baseline:
            parser.error("--compare takes no --out/--baseline")
        if args.itemize:
            return compare_itemized(args.compare[0], args.compare[1])
        return compare(args.compare[0], args.compare[1], args.diff_lines)
    if not args.out:
        parser.error("give --out DIR (to record) or --compare A B")
    corpus = args.corpus.resolve()
    out = args.out.resolve()
    if args.baseline:
        return record_baseline(args.baseline, corpus, out, max(1, args.jobs), args.only)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return record(REPO, corpus, out, max(1, args.jobs),
                  f"tree {REPO} at {head or 'unknown commit'}{' with uncommitted changes' if dirty else ''}", args.only)


if __name__ == "__main__":
    sys.exit(main())
