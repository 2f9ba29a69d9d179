"""`analyze` opens with the verdict `plan --brief` prints, then its tables; `--plan` adds the full
plan section; `--section` / `--list-sections` choose what prints (issue 38, points 1 and 5)."""

from __future__ import annotations

import pytest

from hotspot.commands.analyze import SPEC as ANALYZE
from hotspot.commands.plan import SPEC as PLAN
from hotspot.commands.pmc import SPEC as PMC


def _ok(cli, *argv: str) -> str:
    r = cli("--no-cache", *argv)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def test_analyze_opens_with_the_brief_verdict_then_the_tables(cli) -> None:
    brief = _ok(cli, "plan", "--example", "--brief").splitlines()
    text = _ok(cli, "analyze", "--example")
    lines = text.splitlines()
    # the same block as `plan --brief`, line for line; only the pointer to the other items differs
    more = [i for i, ln in enumerate(brief) if ln.startswith("+")]
    head = brief[:more[0]] if more else brief
    assert lines[:len(head)] == head
    if more:
        assert lines[len(head)].startswith(brief[more[0]].split(":")[0] + ":")
        assert "--plan" in lines[len(head)]
    # then the tables, and no plan section (the items are behind --plan)
    assert text.index("Stall by category") > text.index(lines[len(head) - 1])
    assert "Top instructions" in text and "Optimization plan" not in text


def test_plan_flag_is_the_full_plan_section(cli) -> None:
    planned = _ok(cli, "analyze", "--example", "--plan")
    assert "Optimization plan" in planned and "Stall by category" not in planned
    assert "see the plan below" in planned
    both = _ok(cli, "analyze", "--example", "--plan", "--detail")
    assert both.index("Stall by category") < both.index("Optimization plan")


def test_json_is_unchanged_by_the_verdict(cli) -> None:
    data = cli("--no-cache", "analyze", "--example", "--format", "json").json()["data"]
    assert data["plan"] is None and "verdict" not in data and "plan" not in data["options"]


def _headings(text: str) -> list[str]:
    lines = text.splitlines()
    return [lines[i - 1] for i, ln in enumerate(lines) if i and ln and set(ln) == {"-"}
            and len(ln) == len(lines[i - 1])]


@pytest.mark.parametrize("spec", [ANALYZE, PLAN], ids=lambda s: s.name)
def test_list_sections_needs_no_input(cli, spec) -> None:
    r = cli(spec.name, "--list-sections")
    assert r.exit_code == 0, r.stderr
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == list(spec.sections)
    assert all(len(ln) <= 80 for ln in r.stdout.splitlines())


@pytest.mark.parametrize("spec", [ANALYZE, PLAN, PMC], ids=lambda s: s.name)
@pytest.mark.parametrize("order", ["list-first", "format-first"])
def test_list_sections_in_json_whatever_the_option_order(cli, spec, order) -> None:
    """`--list-sections --format json` is one JSON document (the option is read before --format
    would be otherwise); text with any other format; no input needed either way."""
    import json

    argv = ["--list-sections", "--format", "json"]
    r = cli(spec.name, *(argv if order == "list-first" else argv[1:] + argv[:1]))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["command"] == spec.name and doc["ok"] is True
    assert [(s["name"], s["description"]) for s in doc["data"]["sections"]] == list(spec.sections.items())
    for fmt in ("text", "markdown", "csv"):
        for args in (["--list-sections", "--format", fmt], ["--format", fmt, "--list-sections"]):
            t = cli(spec.name, *args)
            assert t.exit_code == 0 and [ln.split()[0] for ln in t.stdout.splitlines()] == list(spec.sections)


@pytest.mark.parametrize("spec", [ANALYZE, PLAN], ids=lambda s: s.name)
def test_unknown_section_is_a_usage_error_naming_the_valid_ones(cli, spec) -> None:
    r = cli("--no-cache", spec.name, "--example", "--section", "stall,nonesuch")
    assert r.exit_code == 2 and r.stdout == ""
    assert "nonesuch" in r.stderr and all(n in r.stderr for n in spec.sections)
    j = cli("--no-cache", spec.name, "--example", "--section", "nonesuch", "--format", "json").json()
    assert j["error"]["code"] == "usage"


@pytest.mark.parametrize("spec,argv", [(ANALYZE, ("--plan", "--detail")), (PLAN, ("--detail",))],
                         ids=["analyze", "plan"])
def test_sections_partition_the_full_view(cli, spec, argv) -> None:
    """Every block of the full view belongs to a declared section: the sections printed one at a
    time give the full view back, in order; asking for all of them is the full view."""
    full = _ok(cli, spec.name, "--example", *argv)
    every = ",".join(reversed(list(spec.sections)))  # the asked order does not matter
    assert _ok(cli, spec.name, "--example", *argv, "--section", every) == full
    pieces = [_ok(cli, spec.name, "--example", *argv, "--section", name) for name in spec.sections
              if name != "verdict"]
    verdict, _, rest = full.partition("\n\n")
    assert "\n\n".join(p.rstrip("\n") for p in pieces if p.strip()) + "\n" == rest
    assert sum(1 for p in pieces if p.strip()) >= 3
    # the verdict alone: the same block, pointing at `--plan` for the rest since no plan follows
    alone = _ok(cli, spec.name, "--example", *argv, "--section", "verdict")
    assert alone.splitlines()[0] == verdict.splitlines()[0] and "\n\n" not in alone.rstrip("\n")


def test_one_section_prints_only_it(cli) -> None:
    text = _ok(cli, "analyze", "--example", "--section", "Stall")  # case forgiven
    assert _headings(text) == ["Stall by category (cycles)"]
    assert not text.startswith("hotspot")  # no verdict asked


def test_pmc_still_implies_the_plan_section(cli) -> None:
    from pathlib import Path

    counters = Path(__file__).parent / "fixtures" / "pmc" / "l2.csv"
    text = _ok(cli, "analyze", "--example", "--pmc", str(counters))
    assert "Optimization plan" in text and "Stall by category" not in text
