"""kernel_regex: every regex matches its own name (re.search) and no other name in the same file."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.capture.trace.kernel_stats import read_kernel_stats_csv
from hotspot.capture.trace.kernel_trace import read_kernel_trace_csv
from hotspot.capture.trace.rocpd import read_rocpd_dispatches
from hotspot.trace.regex import escape, kernel_regex, kernel_regexes


def _assert_unique(names: set[str]) -> dict[str, str]:
    regexes = kernel_regexes(names)
    for name, rx in regexes.items():
        compiled = re.compile(rx)
        assert compiled.search(name), (rx, name)
        assert [o for o in names if o != name and compiled.search(o)] == [], rx
    return regexes


def _corpus_name_sets(corpus: Path) -> list[tuple[str, set[str]]]:
    sets = []
    for p in sorted(corpus.rglob("*kernel_stats.csv")):
        sets.append((str(p), {r.name for r in read_kernel_stats_csv(p)}))
    for p in sorted(corpus.rglob("*kernel_trace*.csv")):
        sets.append((str(p), {r.kernel_name for r in read_kernel_trace_csv(p)}))
    db = corpus / "att" / "gfx942" / "ck_bmm" / "37ca13315e70" / "28_results.db"
    sets.append((str(db), {r.kernel_name for r in read_rocpd_dispatches(db)}))
    return sets


def test_corpus_regexes_are_unique(corpus: Path) -> None:
    sets = _corpus_name_sets(corpus)
    assert len(sets) >= 12  # 6 stats + 7 traces + the rocpd db
    for _, names in sets:
        _assert_unique(names)


def test_readable_forms() -> None:
    names = {"void addition_kernel<float>(float*, int)", "divide_kernel(float*)", "kernel_gemm_0",
             "kernel_gemm_0_v2", "(anonymous namespace)::vector_add_v0(float const*)",
             "void at::native::k<1>(int)", "void at::native::k<2>(int)", "void f<1>(int)",
             "void f<1>(float)"}
    rx = _assert_unique(names)
    assert rx["void addition_kernel<float>(float*, int)"] == "^void addition_kernel"
    assert rx["divide_kernel(float*)"] == r"^divide_kernel"
    assert rx["kernel_gemm_0"] == "^kernel_gemm_0$"          # a prefix would also match _v2
    assert rx["(anonymous namespace)::vector_add_v0(float const*)"] == r"^\(anonymous namespace\)::vector_add_v0"
    # Same stem: the prefix up to the argument list when that is unique...
    assert rx["void at::native::k<1>(int)"] == "^void at::native::k<1>"
    # ...else the whole name, anchored and escaped.
    assert rx["void f<1>(int)"] == r"^void f<1>\(int\)$"


def test_truncated_and_full_names_in_one_file() -> None:
    # A truncated name is a prefix of the full one: the prefix regex must not be chosen for it.
    names = {"addition_kernel", "addition_kernel(float*)"}
    rx = _assert_unique(names)
    assert rx["addition_kernel"] == "^addition_kernel$"


def test_escape_only_touches_metacharacters() -> None:
    assert escape("a.b*c(d)[e]{f}|g^h$i+j?k\\l m<n>,o:p") == \
        r"a\.b\*c\(d\)\[e\]\{f\}\|g\^h\$i\+j\?k\\l m<n>,o:p"


NAME_CHARS = st.sampled_from(list("abk_01:<>(), *&.[]{}|^$+?\\-#\"'") + ["(anonymous namespace)", "void "])
NAMES = st.lists(NAME_CHARS, min_size=1, max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.sets(NAMES, min_size=1, max_size=8))
def test_regex_unique_for_any_name_set(names: set[str]) -> None:
    _assert_unique(names)


@settings(max_examples=100, deadline=None)
@given(NAMES, NAMES)
def test_prefix_pairs(a: str, b: str) -> None:
    # Names that extend each other are the hard case for prefix regexes.
    names = {a, a + b}
    if len(names) == 2:
        _assert_unique(names)


def test_single_name_matches_itself_with_newline_neighbour() -> None:
    rx = kernel_regex("k", {"k", "k\n"})
    assert re.search(rx, "k") and not re.search(rx, "k\n")
