"""The "Where do I add ..." table of CONTRIBUTING.md, tried as a contributor would.

For each row issues 25 and 35 name (a stall category, an input layout, a plan rule, an output
format, a command, a code.json layout variant, an architecture) a recipe below holds the addition as data: the edits to the files the row names, the scripts the
contributor then runs, and the project's own checks that must still pass. The test copies the
project (hotspot/, docs/, skills/, the scripts and tests a recipe needs, pyproject.toml) into a
temporary git repository, applies the recipe there, and checks that
  (a) the addition works end to end: the copy's code, run in a subprocess, shows it (the new
      category in `analyze --format json`, the new side file deciding the arch, the new rule in
      `plan --format json`, the new format from `analyze --format <new>`);
  (b) `git status` lists exactly the recipe's files, and the table's row names every one of them;
  (c) the row holds: at most MAX_CODE_FILES files outside docs/ and skills/ (the skill's
      references are copies of docs/, written by scripts/sync_skill.py; the files the scripts
      write count as one, the snapshot they make).
A row that needs more files today fails (c) with the files named; it is marked
xfail(strict=True, raises=RowOverBudget) so it flips to a failure, to be unmarked, once it holds.
The stall-category row has two recipes: a VALU op (`trans`) and a memory op (`vmem-load-lds`), whose
category sets differ. test_the_table_names_only_what_exists checks every row of the table.

When the code moves, re-aim a recipe: its edits name the file and a unique anchor text; a missing
anchor fails with the file and the anchor.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_RUN = ROOT / "hotspot" / "examples" / "data" / "example_run"
EXAMPLE_DISPATCH = "ui_output_agent_5600_dispatch_1"
MAX_CODE_FILES = 3
DOC_PREFIXES = ("docs/", "skills/")
SUBPROCESS_TIMEOUT_S = 120
SRC = "/work/synth/kernels/k.py"
SMALL = Layout(ses=(0,), simds=2, slots=1, other_cus=())


class RowOverBudget(AssertionError):
    """The row needs more than MAX_CODE_FILES files outside docs/ today."""


@dataclass(frozen=True)
class Edit:
    path: str               # relative to the project root
    old: str | None         # text occurring exactly once in the file; None: `new` is a new file
    new: str
    named_as: str = ""      # how the table's row names the file (default: its path)


@dataclass(frozen=True)
class Recipe:
    name: str                        # the test id
    row: str                         # the row's first cell in CONTRIBUTING.md
    edits: tuple[Edit, ...]
    check: Callable[[Path, Path], None]   # (copy, scratch dir): the addition works end to end
    run: tuple[str, ...] = ()        # scripts/<name> the contributor runs after editing
    generated: tuple[str, ...] = ()  # files those scripts rewrite
    project_tests: tuple[str, ...] = ()  # the project's own checks, run in the copy

    def files(self) -> set[str]:
        return {e.path for e in self.edits} | set(self.generated)

    def code_files(self) -> list[str]:
        """The files outside docs/ the row costs: each one edited, and what the scripts rewrite
        as one (scripts/gen_help.py writes the command index and the help pages it serves apart)."""
        edited = sorted({e.path for e in self.edits if not e.path.startswith(DOC_PREFIXES)})
        written = sorted(f for f in self.generated if not f.startswith(DOC_PREFIXES))
        return edited + ([" + ".join(written)] if written else [])

    def table_names(self) -> set[str]:
        return {e.named_as or e.path for e in self.edits if not e.path.startswith(DOC_PREFIXES)} \
            | {f"scripts/{s}" for s in self.run}


# ---- running the copy ------------------------------------------------------------------------------

def _env(copy: Path, scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PYTHONPATH")}
    tmp = scratch / "tmp"
    tmp.mkdir(exist_ok=True)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the copy's bytecode is reused by its later runs
    env.update(PYTHONPATH=str(copy), HOTSPOT_CACHE="off", TMPDIR=str(tmp),
               XDG_CACHE_HOME=str(tmp / "cache"), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def _hotspot(copy: Path, scratch: Path, *args: str) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "hotspot", *args], cwd=copy, env=_env(copy, scratch),
                       capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode == 0, f"hotspot {' '.join(args)} in the copy: exit {p.returncode}\n{p.stderr}"
    return p


def _json(copy: Path, scratch: Path, *args: str) -> dict:
    return json.loads(_hotspot(copy, scratch, *args, "--format", "json").stdout)["data"]


def _synth(scratch: Path, rows: list[str], loops: list[tuple[int, int, int]]) -> Path:
    """A synthetic capture (written by this checkout's generator: it is input, not code under test)."""
    program = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(rows)], loops)
    return make_dispatch(scratch / "capture", DispatchSpec(arch="gfx950", program=program, waves=4,
                                                            layout=SMALL, variants=4, agent_info=True), seed=3)


# ---- row: a stall category ---------------------------------------------------------------------------
# `trans`: the transcendental unit's ops (quarter rate), split out of `valu`. It is a VALU op, so the
# VALU set (the s_nop padding rule: the compiler pads trans results) must hold it, the synthetic
# generator needs its decoder category, and the HTML report needs its colour.

TRANS_PREFIXES = ("v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_")

CATEGORY = Recipe(
    name="stall-category-valu-op",
    row="a stall category",
    edits=(
        Edit("hotspot/arch/classify.py", '    VALU = "valu"\n', '    TRANS = "trans"\n    VALU = "valu"\n'),
        Edit("hotspot/arch/classify.py", "VECTOR_ALU = frozenset({C.VALU, C.MFMA})",
             "VECTOR_ALU = frozenset({C.VALU, C.MFMA, C.TRANS})"),
        Edit("hotspot/arch/classify.py", '    ("v_", "valu"),\n',
             "    # the transcendental unit\n"
             + "".join(f'    ("{p}", "trans"),\n' for p in TRANS_PREFIXES) + '    ("v_", "valu"),\n'),
        Edit("hotspot/synth/isa.py", 'C.VALU: (CAT_VALU, "valu"),',
             'C.VALU: (CAT_VALU, "valu"), C.TRANS: (CAT_VALU, "valu"),'),
        Edit("hotspot/render/html.py", '"message": "#9a9a9a", "other": "#cccccc",',
             '"message": "#9a9a9a", "other": "#cccccc", "trans": _VIEWER["VALU"],'),
        Edit("docs/stall-taxonomy.md", "| `valu` | every other `v_*`",
             "| `trans` | `v_exp_*`, `v_log_*`, `v_rcp_*`, `v_rsq_*`, `v_sqrt_*`, `v_sin_*`, `v_cos_*` | "
             "the transcendental unit (quarter rate): a trans result dependency or the unit busy |\n"
             "| `valu` | every other `v_*`"),
    ),
    run=("sync_skill.py",),
    generated=("skills/hotspot/references/stall-taxonomy.md",),
    project_tests=("tests/test_classify.py::test_taxonomy_doc_lists_every_category_and_deliberate_other",
                   "tests/test_skill.py::test_skill_references_are_copies_of_docs"),
    check=lambda copy, scratch: _check_category(copy, scratch),
)


def _check_category(copy: Path, scratch: Path) -> None:
    rows = ["v_mov_b32 v1, 1.0"]
    for k in range(6):
        rows += [f"v_exp_f32 v{2 + k}, v1", "s_nop 1", f"v_mul_f32 v{10 + k}, v{2 + k}, v1"]
    rows += ["s_endpgm"]
    d = _synth(scratch, rows, [])
    data = _json(copy, scratch, "analyze", str(d), "--topk", "0", "--plan")
    trans = [i for i in data["instructions"] if i["isa"].startswith("v_exp_f32")]
    assert len(trans) == 6 and {i["category"] for i in trans} == {"trans"}
    assert "trans" in {m["category"] for m in data["instruction_mix"]}
    # the HTML report draws it in the VALU colour, not the grey of unknown categories
    html = _hotspot(copy, scratch, "analyze", str(d), "--format", "html").stdout
    assert '"trans":"#00a000"' in html
    # the plan's VALU set knows it: the padding between a trans op and its consumer is found
    plan = data["plan"]
    chain = [i for i in plan if i["id"] == "valu-dependency-chain"]
    assert chain and "v_exp_f32 -> s_nop 1 -> v_mul_f32" in json.dumps(chain[0]["evidence"]), \
        [i["id"] for i in plan]


# The same row for a memory op: `vmem-load-lds`, direct-to-LDS loads (`buffer_load_dword ... lds`,
# `global_load_lds_*`) split out of `vmem-load`. A split must not change the plan, so the new
# category joins every named set of loads it belongs to in hotspot/arch/classify.py: memory ops, the
# VMEM loads (the wait rules' loads: the check proves it with load-in-mfma-loop), the requests that
# move DRAM bytes (bandwidth roof), the vmcnt producers, the loads whose waits can move, the memory
# stall. Not narrow-loads' set: access_rules.py leaves LDS-DMA loads out on purpose.

CATEGORY_MEMORY = Recipe(
    name="stall-category-memory-op",
    row="a stall category",
    edits=(
        Edit("hotspot/arch/classify.py", '    VMEM_LOAD = "vmem-load"\n',
             '    VMEM_LOAD = "vmem-load"\n    VMEM_LOAD_LDS = "vmem-load-lds"\n'),
        *(Edit("hotspot/arch/classify.py", f"\n{name} = {opening}C.VMEM_LOAD, ",
               f"\n{name} = {opening}C.VMEM_LOAD, C.VMEM_LOAD_LDS, ")
          for name, opening in (("MEMORY_CATEGORIES", "frozenset({"), ("VMEM_LOADS", "frozenset({"),
                                ("VMEM_ACCESS", "frozenset({"), ("VM_PRODUCERS", "frozenset({"),
                                ("LOADS", "frozenset({"), ("MEMORY_STALL", "(C.WAIT_VMCNT, C.WAIT_MIXED, "))),
        Edit("hotspot/arch/classify.py", "    return Classified(mnemonic, category, direct_to_lds=direct)",
             "    return Classified(mnemonic, C.VMEM_LOAD_LDS if direct else category, direct_to_lds=direct)"),
        Edit("hotspot/synth/isa.py", 'C.VMEM_LOAD: (CAT_VMEM, "vmem_load"),',
             'C.VMEM_LOAD: (CAT_VMEM, "vmem_load"), C.VMEM_LOAD_LDS: (CAT_VMEM, "vmem_load"),'),
        Edit("hotspot/render/html.py", '"vmem-load": _VIEWER["VMEM"], ',
             '"vmem-load": _VIEWER["VMEM"], "vmem-load-lds": _VIEWER["VMEM"], '),
        Edit("docs/stall-taxonomy.md", ". Direct-to-LDS loads (`... lds` operand, `*_load_lds_*`) are here with "
             "`direct_to_lds: true`", ", except direct-to-LDS loads"),
        Edit("docs/stall-taxonomy.md", "| `vmem-store` |",
             "| `vmem-load-lds` | direct-to-LDS loads: `... lds` operand, `*_load_lds_*` "
             "(`direct_to_lds: true`) | as `vmem-load`; the data lands in LDS, not in VGPRs |\n| `vmem-store` |"),
    ),
    run=("sync_skill.py",),
    generated=("skills/hotspot/references/stall-taxonomy.md",),
    project_tests=("tests/test_classify.py::test_taxonomy_doc_lists_every_category_and_deliberate_other",
                   "tests/test_skill.py::test_skill_references_are_copies_of_docs"),
    check=lambda copy, scratch: _check_category_memory(copy, scratch),
)


def _check_category_memory(copy: Path, scratch: Path) -> None:
    mfma = "v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]"
    loads = [f"buffer_load_dword v8, s[4:7], 0 offen offset:{64 * k} lds" for k in range(4)]
    rows = ["s_mov_b32 s0, 0", *loads, "s_waitcnt vmcnt(0)", mfma, mfma, "s_cbranch_scc1 1", "s_endpgm"]
    d = _synth(scratch, rows, [(1, len(loads) + 4, 12)])
    data = _json(copy, scratch, "analyze", str(d), "--topk", "0", "--plan")
    direct = [i for i in data["instructions"] if i["isa"].startswith("buffer_load_dword")]
    assert len(direct) == 4 and all(i["category"] == "vmem-load-lds" and i["direct_to_lds"] for i in direct)
    html = _hotspot(copy, scratch, "analyze", str(d), "--format", "html").stdout
    assert '"vmem-load-lds":"#ffc432"' in html
    # the split changes no plan item: the copy plans what this checkout plans
    plan = data["plan"]
    before = _json(ROOT, scratch, "analyze", str(d), "--topk", "0", "--plan")
    assert "load-in-mfma-loop" in [i["id"] for i in plan]
    assert [(i["id"], i["location"], i["estimate"]) for i in plan] == \
        [(i["id"], i["location"], i["estimate"]) for i in before["plan"]]
    assert data["plan_skipped"] == before["plan_skipped"]  # the rules that did not fire, and why


# ---- row: an input layout ----------------------------------------------------------------------------
# A capture inside a rocprof-compute workload folder: its sysinfo.csv (gpu_arch, gpu_model) names
# the GPU. A new side-file name with a new reader.

LAYOUT = Recipe(
    name="input-layout",
    row="an input layout",
    edits=(
        Edit("hotspot/capture/sidefiles.py", '"hotspot.capture.target:code_object_agents", 4),\n',
             '"hotspot.capture.target:code_object_agents", 4),\n'
             "    # a rocprof-compute workload folder: gpu_arch, gpu_model\n"
             '    SideFile("sysinfo", ("sysinfo.csv",), AGENTS, "hotspot.capture.agents:read_agents_sysinfo", 5),\n'),
        Edit("hotspot/capture/agents.py", "def read_agents_results_json(path: Path) -> list[tuple[str, str]]:",
             '''def read_agents_sysinfo(path: Path) -> list[tuple[str, str]]:
    """The GPU of a rocprof-compute sysinfo.csv (columns gpu_arch, gpu_model; one row)."""
    import csv

    try:
        with open_text(path, confine=False) as fh:
            csv.field_size_limit(CSV_FIELD_LIMIT)
            rows = list(csv.DictReader(fh))
    except (OSError, csv.Error, InputError):
        return []
    out = []
    for row in rows:
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        if GFX_RE.match(row.get("gpu_arch", "")):
            out.append((row["gpu_arch"], row.get("gpu_model", "")))
    return out


def read_agents_results_json(path: Path) -> list[tuple[str, str]]:'''),
        Edit("docs/cli/analyze.md", "a `*results.json`; code-object file names",
             "a `*results.json`; a rocprof-compute `sysinfo.csv`; code-object file names"),
    ),
    check=lambda copy, scratch: _check_layout(copy, scratch),
)


def _check_layout(copy: Path, scratch: Path) -> None:
    run = scratch / "workload"
    shutil.copytree(EXAMPLE_RUN / EXAMPLE_DISPATCH, run / EXAMPLE_DISPATCH)  # without its agent_info
    sysinfo = run / "sysinfo.csv"
    sysinfo.write_text("workload_name,gpu_series,gpu_model,gpu_arch,cu_per_gpu\n"
                       "example,MI350,MI350X_test,gfx950,256\n")
    arch = _json(copy, scratch, "analyze", str(run / EXAMPLE_DISPATCH))["arch"]
    assert arch["gfx"] == "gfx950" and arch["source"] == f"sysinfo: {sysinfo}", arch


# ---- row: a plan rule --------------------------------------------------------------------------------
# `scratch-in-loop`: a spilled value reloaded from scratch inside a loop, waited on every iteration
# (a simpler twin of the real `register-spill`, in its own module so the recipe adds a new file).

SPILL_RULES = '''"""`scratch-in-loop`: register spills reloaded inside a loop.

A `scratch_load` in a loop body reads back a value the compiler spilled because the kernel needs
more VGPRs than it was given; every iteration then waits on a memory round trip for it. The first
`s_waitcnt` after the reload is what the spill costs.
"""

from __future__ import annotations

from hotspot.arch.classify import Category
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule

WAIT_LOOKAHEAD = 8  # rows after a reload searched for the wait that covers it


def scratch_in_loop(ctx: PlanContext, rule: Rule) -> Outcome:
    reloads = sorted({n for lo, hi in ctx.loop_ranges for n in range(lo, hi + 1)
                      if n in ctx.instructions and ctx.instructions[n].category == Category.SCRATCH
                      and ctx.instructions[n].isa.lower().startswith("scratch_load")
                      and ctx.instructions[n].hit > 0})
    if not reloads:
        return "no scratch reload executed inside a loop"
    waits: dict[int, int] = {}
    for n in reloads:
        wait = next((w for w in ctx.following(n, WAIT_LOOKAHEAD) if w.isa.startswith("s_waitcnt")), None)
        if wait is not None:
            waits[wait.line_number] = wait.stall
    target = sum(waits.values())
    if target <= 0:
        return "the scratch reloads inside loops are not waited on"
    top = max(sorted(waits), key=lambda n: waits[n])
    return [Candidate(ctx.location_of(ctx.instructions[reloads[0]]),
                      [Evidence("scratch_reloads", len(reloads)), Evidence("reload_wait_stall_cycles", target)],
                      target,
                      f"{len(reloads)} spilled value(s) reloaded from scratch inside the loop; the wait "
                      f"at #{top} holds the round trip on every iteration")]
'''

RULE = Recipe(
    name="plan-rule",
    row="a plan rule",
    edits=(
        Edit("hotspot/plan/scratch_rules.py", None, SPILL_RULES, named_as="hotspot/plan/<kind>_rules.py"),
        Edit("hotspot/plan/rules.py", "from hotspot.plan import spin_rules as spin\n",
             "from hotspot.plan import scratch_rules as scratch\nfrom hotspot.plan import spin_rules as spin\n"),
        Edit("hotspot/plan/rules.py", '''    Rule(
        id="source-collapse",''', '''    Rule(
        id="scratch-in-loop", title="spilled registers reloaded inside a loop", kind=Kind.CODE,
        reads=("instructions", "loops"), optional_reads=(),
        thresholds={},
        fix="Stop the spill: give the kernel the VGPRs it uses (launch bounds / waves-per-EU), keep "
            "fewer values live across the loop, or recompute cheap values instead of keeping them.",
        removable=(0.5, 0.9),
        basis="without the spill the reload and its wait disappear; the low end allows for a "
              "register budget that costs a wave of occupancy",
        evaluate=scratch.scratch_in_loop),
    Rule(
        id="source-collapse",'''),
        Edit("docs/plan-rules.md", "| `spin-wait-barrier` |",
             "| `scratch-in-loop` | an executed `scratch_load` inside a loop and the first `s_waitcnt` "
             "after it (within 8 rows: `WAIT_LOOKAHEAD`) with stall | – | stop the spill: more VGPRs "
             "(launch bounds), fewer live values, recompute | target = those waits' stall; 50–90% |\n"
             "| `spin-wait-barrier` |"),
        Edit("docs/plan-rules.md", "| `spin-wait-barrier` (code) |",
             "| `scratch-in-loop` (code) | scratch reloads waited on inside a loop | bandwidth roof, "
             "compute roof, trace ceiling |\n| `spin-wait-barrier` (code) |"),
        Edit("docs/schema/plan.md", "`spin-wait-barrier`, ", "`spin-wait-barrier`, `scratch-in-loop`, "),
    ),
    run=("sync_skill.py",),
    generated=("skills/hotspot/references/plan-rules.md",),
    project_tests=("tests/test_plan_rules.py::test_docs_list_every_rule_and_threshold",
                   "tests/test_plan_rules.py::test_the_rule_table_names_each_rules_cause_and_ceiling",
                   "tests/test_plan_rules.py::test_every_rule_reports_itself_and_tolerates_minimal_data",
                   "tests/test_skill.py::test_skill_references_are_copies_of_docs"),
    check=lambda copy, scratch: _check_rule(copy, scratch),
)


def _check_rule(copy: Path, scratch: Path) -> None:
    body = ["scratch_load_dword v5, off, s0 offset:16", "s_waitcnt vmcnt(0)", "v_add_f32 v6, v5, v6",
            "scratch_store_dword off, v6, s0 offset:16"]
    rows = ["s_mov_b32 s0, 0"] + body + ["s_add_u32 s0, s0, 1", "s_cmp_lt_u32 s0, 8",
                                         "s_cbranch_scc1 -%d" % len(body), "s_endpgm"]
    d = _synth(scratch, rows, [(1, len(body) + 3, 8)])
    plan = _json(copy, scratch, "plan", str(d))["plan"]
    items = [i for i in plan if i["id"] == "scratch-in-loop"]
    assert len(items) == 1, [i["id"] for i in plan]
    assert items[0]["location"]["isa"].startswith("scratch_load_dword")
    assert items[0]["location"]["line"] == 11  # the reload's Source line (row 1 -> SRC:11)


# ---- row: an output format ---------------------------------------------------------------------------
# `analyze --format tsv`: the instruction table, tab-separated, one row per code row. The `--format`
# choices (and so the help snapshot) come from the views of the command's SPEC.

CSV_RENDERER = '''"""`analyze --format tsv`: the instruction table as TSV, one row per instruction row."""

from __future__ import annotations

import csv
import io

from hotspot.result import Result

COLUMNS = ("line_number", "isa", "category", "hit", "stall", "latency", "idle", "source")


def render_csv(result: Result) -> str:
    data = result.plain_data()
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\\t", lineterminator="\\n")
    writer.writerow(COLUMNS)
    for row in data.get("instructions") or [] if isinstance(data, dict) else []:
        writer.writerow([row.get(c, "") for c in COLUMNS])
    return out.getvalue()
'''

FORMAT = Recipe(
    name="output-format",
    row="an output format",
    edits=(
        Edit("hotspot/render/tsv_table.py", None, CSV_RENDERER, named_as="a renderer module in hotspot/render/"),
        Edit("hotspot/commands/analyze.py", '"csv": "hotspot.render.csv_views:render_analyze"}',
             '"csv": "hotspot.render.csv_views:render_analyze",\n'
             '                       "tsv": "hotspot.render.tsv_table:render_csv"}',
             named_as="hotspot/commands/<command>.py"),
        Edit("docs/cli/analyze.md", "[--format text|json|markdown|html|csv]",
             "[--format text|json|markdown|html|csv|tsv]"),
        Edit("docs/cli/analyze.md", "`html`, `csv` (one table per section",
             "`html`, `tsv` (the instruction table), `csv` (one table per section"),
    ),
    run=("gen_help.py",),
    generated=("hotspot/clihelp/index.py", "hotspot/clihelp/pages.py"),
    project_tests=("tests/test_clihelp.py::test_snapshot_is_what_the_commands_register",),
    check=lambda copy, scratch: _check_format(copy, scratch),
)


def _check_format(copy: Path, scratch: Path) -> None:
    d = str(EXAMPLE_RUN / EXAMPLE_DISPATCH)
    table = list(csv.reader(io.StringIO(_hotspot(copy, scratch, "analyze", d, "--format", "tsv", "--topk", "0").stdout),
                            delimiter="\t"))
    instructions = _json(copy, scratch, "analyze", d)["instructions"]
    assert table[0][:3] == ["line_number", "isa", "category"]
    assert [r[:3] for r in table[1:]] == [[str(i["line_number"]), i["isa"], i["category"]]
                                          for i in instructions]
    assert len(table) > 2


# ---- row: a command ----------------------------------------------------------------------------------
# `hotspot products`: the GPU products hotspot has numbers for (hotspot/arch/products.py), with the
# clock, bandwidth and matrix throughput the rooflines use. Its SPEC puts it in the CLI, the top-level
# help, the render registry, the output cache and the MCP server; nothing else is edited.

PRODUCTS_COMMAND = '''"""`hotspot products`: the GPU products hotspot has numbers for (thin adapter)."""

from __future__ import annotations

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "products", rank=65,
    help="The GPU products hotspot has numbers for: CUs, clock, HBM bandwidth and dense matrix "
         "throughput, the numbers its rooflines use.",
    cacheable=True,
    views={"products": text_and_markdown("hotspot.render.products", "render_text", "render_markdown")},
    tools=(ToolSpec("products"),),
)

FormatOpt = format_option("products")


def register(app: typer.Typer) -> None:
    @app.command("products", help=SPEC.help)
    def products(fmt: FormatOpt = "text") -> None:
        def produce():
            from hotspot.arch.products import PRODUCTS
            from hotspot.result import Result

            return Result("products", list(PRODUCTS.values()))

        raise typer.Exit(run("products", fmt, produce))
'''

PRODUCTS_RENDERER = '''"""Text and markdown views of a `products` Result."""

from __future__ import annotations

from hotspot.render.tables import heading, table
from hotspot.result import Result

HEADERS = ("product", "gfx", "CUs", "clock MHz", "HBM GB/s", "f16 TFLOP/s")


def _render(result: Result, md: bool) -> str:
    rows = [[p.name, p.gfx, p.cus, p.peak_engine_clock_mhz, p.peak_hbm_gbps, p.dense_f16_tflops]
            for p in result.data]
    return "\\n".join([heading("GPU products", md), table(rows, HEADERS, markdown=md)])


def render_text(result: Result) -> str:
    return _render(result, False)


def render_markdown(result: Result) -> str:
    return _render(result, True)
'''

COMMAND = Recipe(
    name="command",
    row="a command",
    edits=(
        Edit("hotspot/commands/products.py", None, PRODUCTS_COMMAND, named_as="hotspot/commands/<command>.py"),
        Edit("hotspot/render/products.py", None, PRODUCTS_RENDERER, named_as="hotspot/render/<command>.py"),
        Edit("docs/cli/products.md", None, "# hotspot products\n\n`hotspot products [--format "
             "text|json|markdown]`: the GPU products hotspot has numbers for (hotspot/arch/products.py).\n"),
    ),
    run=("gen_help.py",),
    generated=("hotspot/clihelp/index.py", "hotspot/clihelp/pages.py"),
    project_tests=("tests/test_clihelp.py::test_snapshot_is_what_the_commands_register",
                   "tests/test_cli_surface.py::test_top_level_listing_is_what_the_commands_register",
                   "tests/test_output_sink.py::test_every_command_renders_through_the_registry",
                   "tests/test_output_sink.py::test_the_registry_names_real_functions",
                   "tests/test_output_sink.py::test_no_command_module_renders_itself"),
    check=lambda copy, scratch: _check_command(copy, scratch),
)


def _python(copy: Path, scratch: Path, code: str) -> str:
    p = subprocess.run([sys.executable, "-c", code], cwd=copy, env=_env(copy, scratch), capture_output=True,
                       text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _check_command(copy: Path, scratch: Path) -> None:
    from hotspot.arch.products import PRODUCTS

    data = _json(copy, scratch, "products")
    assert [(p["name"], p["gfx"], p["cus"]) for p in data] == [(p.name, p.gfx, p.cus) for p in PRODUCTS.values()]
    text = _hotspot(copy, scratch, "products").stdout
    assert all(p.name in text for p in PRODUCTS.values())
    markdown = _hotspot(copy, scratch, "products", "--format", "markdown").stdout
    assert markdown.count("\n|") >= len(PRODUCTS) + 1  # header + one row per product
    # the top-level help (the snapshot, printed without typer) lists it with its help
    listing = _hotspot(copy, scratch, "--help").stdout
    assert re.search(r"^\s+products\s+The GPU products hotspot has numbers for", listing, re.M), listing
    # --format refuses what the spec has no renderer for
    p = subprocess.run([sys.executable, "-m", "hotspot", "products", "--format", "html"], cwd=copy,
                       env=_env(copy, scratch), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode == 2 and "html" in p.stderr
    # the output cache and the MCP server know it from the same spec
    known = json.loads(_python(copy, scratch, "import json; from hotspot.cache.output import CACHEABLE; "
                               "from hotspot.mcp.tool_schemas import BY_NAME, input_schema; "
                               "print(json.dumps([CACHEABLE, input_schema(BY_NAME['products'])]))"))
    # no options of its own: only the paging arguments every tool takes (docs/cli/mcp.md)
    assert "products" in known[0] and set(known[1]["properties"]) == {"cursor", "max_bytes"}


# ---- row: a code.json layout variant -----------------------------------------------------------------
# A decoder that names the second column of code.json's header `Index` instead of `_`: the same
# table under another column name. Refused today (header column 1 is not '_'), read the same after.

LAYOUT_VARIANT = Recipe(
    name="code-json-layout-variant",
    row="a code.json layout variant",
    edits=(
        Edit("hotspot/capture/codejson.py", "_INT_COLUMNS = (",
             "# Other names decoders give a base column -> the name above.\n"
             "COLUMN_ALIASES = {\"Index\": \"_\"}\n_INT_COLUMNS = ("),
        Edit("hotspot/capture/codejson.py", "        raise bad_file(path, \"field 'header' is neither a string nor a list of strings\")\n",
             "        raise bad_file(path, \"field 'header' is neither a string nor a list of strings\")\n"
             "    names = tuple(COLUMN_ALIASES.get(n, n) for n in names)\n"),
    ),
    check=lambda copy, scratch: _check_layout_variant(copy, scratch),
)


def _check_layout_variant(copy: Path, scratch: Path) -> None:
    run = scratch / "variant"
    shutil.copytree(EXAMPLE_RUN, run)
    code = run / EXAMPLE_DISPATCH / "code.json"
    doc = json.loads(code.read_text())
    header = doc["header"].split(",") if isinstance(doc["header"], str) else list(doc["header"])
    assert header[1].strip() == "_"
    header[1] = "Index"
    doc["header"] = ",".join(h.strip() for h in header) if isinstance(doc["header"], str) else header
    code.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, "-m", "hotspot", "analyze", str(run / EXAMPLE_DISPATCH), "--format", "json"],
                       cwd=ROOT, env=_env(ROOT, scratch), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode != 0 and "header column 1 is 'Index'" in p.stderr, p.stderr  # refused before
    after = _json(copy, scratch, "analyze", str(run / EXAMPLE_DISPATCH))
    before = _json(ROOT, scratch, "analyze", str(EXAMPLE_RUN / EXAMPLE_DISPATCH))
    assert after["instructions"] == before["instructions"] and after["totals"] == before["totals"]


# ---- row: an architecture ----------------------------------------------------------------------------
# gfx940, the first MI300 target (CDNA3 as gfx942, the same per-CU tables): one table entry. Refused
# today (no table), then the occupancy model and the analysis run on it.

GFX940 = """GFX940 = _entry(**_common_gfx9(
    gfx=Sourced("gfx940", "LLVM processor name (MI300 pre-production)"),
    family=Sourced("CDNA3", "AMD CDNA3 whitepaper"),
    max_waves_per_simd=Sourced(8, _T1),
    max_waves_per_cu=Sourced(32, _T1),
    vgpr_file=Sourced(UNIFIED, f"{_T1}: 512 unified"),
    vgprs_per_lane=Sourced(512, _T1),
    vgpr_alloc_granule=Sourced(8, _T1),
    implicit_sgprs_always=Sourced(True, f"{_T1}: always 6"),
    lds_per_cu_bytes=Sourced(64 * 1024, _T1),
    max_lds_per_workgroup_bytes=Sourced(64 * 1024, f"{_T1}: LDS per CU = max per workgroup"),
    lds_alloc_granule_bytes=Sourced(512, _T1),
    single_wave_workgroups_per_cu=Sourced(32, f"{_T1}: 1-wave WGs: 32"),
    dense_f16_flops_per_clk_per_cu=Sourced(2048, "CDNA3 per-CU rate, as gfx942"),
    dense_fp8_flops_per_clk_per_cu=Sourced(4096, "CDNA3 per-CU rate, as gfx942"),
    counters=Sourced(GFX942_COUNTERS, "CDNA3 counter names, as gfx942"),
    mfma_passes=Sourced(mt.GFX942_PASSES, "CDNA3 MFMA passes, as gfx942"),
))

"""

ARCH = Recipe(
    name="architecture",
    row="an architecture",
    edits=(
        Edit("hotspot/arch/targets.py", "GFX950 = _entry(", GFX940 + "GFX950 = _entry("),
        Edit("hotspot/arch/targets.py", "for t in (GFX908, GFX90A, GFX942, GFX950)}",
             "for t in (GFX908, GFX90A, GFX940, GFX942, GFX950)}"),
    ),
    check=lambda copy, scratch: _check_arch(copy, scratch),
)


def _check_arch(copy: Path, scratch: Path) -> None:
    args = ("occupancy", "--vgpr", "128", "--lds", "40000", "--wg", "256")
    p = subprocess.run([sys.executable, "-m", "hotspot", *args, "--arch", "gfx940", "--format", "json"], cwd=ROOT,
                       env=_env(ROOT, scratch), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode != 0  # no table for it before
    new = _json(copy, scratch, *args, "--arch", "gfx940")
    # 128 VGPRs of 512: 4 waves/SIMD; 40000 B of LDS (512 B granule) of 64 KiB: 1 workgroup of 4
    # waves per CU = 1 wave per SIMD, the limit
    assert new["arch"] == "gfx940" and new["limits"]["vgpr"] == 4 and new["waves_per_simd"] == 1
    assert new["limiter"] == "lds"
    analysis = _json(copy, scratch, "analyze", str(EXAMPLE_RUN / EXAMPLE_DISPATCH), "--arch", "gfx940")
    assert analysis["arch"]["gfx"] == "gfx940"


# ---- the test ----------------------------------------------------------------------------------------

RECIPES = (CATEGORY, CATEGORY_MEMORY, LAYOUT, RULE, FORMAT, COMMAND, LAYOUT_VARIANT, ARCH)
# Recipes over MAX_CODE_FILES today, and why (name -> reason); the xfail reason adds the files. Empty
# since every row holds (the memory-op row: the named sets moved into hotspot/arch/classify.py; the
# output-format row: the `--format` choices are read from the output registry).
OVER_TODAY: dict[str, str] = {}


def _over_reason(r: Recipe) -> str:
    code = r.code_files()
    return f"{OVER_TODAY[r.name]}: {len(code)} files ({', '.join(code)})"


def _copy_project(recipe: Recipe, dest: Path) -> Path:
    # hotspot/__pycache__ comes along (git ignores it): copied with their sources' times, the compiled
    # modules stay valid for every file the recipe does not edit, which keeps the test fast
    shutil.copytree(ROOT / "hotspot", dest / "hotspot")
    for folder in ("docs", "skills"):
        shutil.copytree(ROOT / folder, dest / folder)
    (dest / "scripts").mkdir()
    (dest / "tests").mkdir()
    helpers = [f"tests/{p.name}" for p in sorted((ROOT / "tests").glob("*.py")) if not p.name.startswith("test_")]
    for rel in ["pyproject.toml", *helpers,
                *(f"scripts/{s}" for s in recipe.run),
                *sorted({t.split("::")[0] for t in recipe.project_tests})]:
        shutil.copy2(ROOT / rel, dest / rel)
    (dest / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.hypothesis/\n")
    return dest


def _git(copy: Path, scratch: Path, *args: str) -> str:
    p = subprocess.run(["git", "-c", "user.name=contributor", "-c", "user.email=c@example.invalid",
                        "-c", "commit.gpgsign=false", *args], cwd=copy, env=_env(copy, scratch),
                       capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode == 0, f"git {' '.join(args)}: {p.stderr}"
    return p.stdout


def _apply(copy: Path, edit: Edit) -> None:
    path = copy / edit.path
    if edit.old is None:
        assert not path.exists(), f"{edit.path} exists already: re-aim the recipe"
        path.write_text(edit.new)
        return
    text = path.read_text()
    n = text.count(edit.old)
    assert n == 1, f"{edit.path}: the anchor {edit.old!r} occurs {n} times (expected once): re-aim the recipe"
    path.write_text(text.replace(edit.old, edit.new))


TABLE = "CONTRIBUTING.md"  # the one where-to-add table


def _table_section() -> str:
    doc = (ROOT / TABLE).read_text()
    return doc.split("## Where do I add", 1)[1].split("\n## ", 1)[0]


def _table_row(row: str) -> str:
    cells = [line for line in _table_section().splitlines() if line.startswith(f"| {row} |")]
    assert len(cells) == 1, f"{TABLE} has no single row '{row}' in its where-to-add table"
    return cells[0].split("|", 2)[2]


@pytest.mark.parametrize("recipe", [
    pytest.param(r, id=r.name,
                 marks=[pytest.mark.xfail(strict=True, raises=RowOverBudget, reason=_over_reason(r))]
                 if r.name in OVER_TODAY else [])
    for r in RECIPES])
def test_where_to_add_row(recipe: Recipe, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the test reads what changed from `git status`")
    copy = _copy_project(recipe, tmp_path / "project")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _git(copy, scratch, "init", "-q")
    _git(copy, scratch, "add", "-A")
    _git(copy, scratch, "commit", "-qm", "base")
    for edit in recipe.edits:
        _apply(copy, edit)
    env = _env(copy, scratch)
    for script in recipe.run:
        p = subprocess.run([sys.executable, f"scripts/{script}"], cwd=copy, env=env, capture_output=True,
                           text=True, timeout=SUBPROCESS_TIMEOUT_S)
        assert p.returncode == 0, f"scripts/{script} in the copy: {p.stderr}"

    # (b) exactly the recipe's files changed, and the row names every one of them
    status = _git(copy, scratch, "status", "--porcelain", "--untracked-files=all")
    changed = {line[3:] for line in status.splitlines()}
    assert changed == recipe.files(), f"changed {sorted(changed)}, recipe says {sorted(recipe.files())}"

    # (a) the addition works end to end, and the project's own checks still pass
    recipe.check(copy, scratch)
    if recipe.project_tests:
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *recipe.project_tests],
                           cwd=copy, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
        assert p.returncode == 0, f"the project's checks fail in the copy:\n{p.stdout[-3000:]}"
    row = _table_row(recipe.row)
    unnamed = sorted(n for n in recipe.table_names() if n not in row)
    assert not unnamed, f"{TABLE}'s row '{recipe.row}' does not name {unnamed}"

    # (c) the row holds
    code = recipe.code_files()
    if len(code) > MAX_CODE_FILES:
        raise RowOverBudget(f"'{recipe.row}' needs {len(code)} files outside docs/ (at most "
                            f"{MAX_CODE_FILES}): {', '.join(code)}")


def test_recipes_cover_the_rows_the_issues_name() -> None:
    rows = {r.row for r in RECIPES}
    assert rows == {"a stall category", "an input layout", "a plan rule", "an output format", "a command",
                    "a code.json layout variant", "an architecture"}
    assert set(OVER_TODAY) <= {r.name for r in RECIPES} and len({r.name for r in RECIPES}) == len(RECIPES)
    for r in RECIPES:
        assert re.fullmatch(r"[a-z .]+", r.row) and _table_row(r.row)


# ---- the table names only what exists -----------------------------------------------------------------

_PATH_RE = re.compile(r"(?<![\w/<])((?:hotspot|docs|tests|scripts|skills)/[\w/.<>-]+\.(?:py|md|yaml)"
                      r"|[a-z_]+/[\w/<>]+\.py)")
_SYMBOL_RE = re.compile(r"`([A-Za-z_][A-Za-z_0-9]*)(?:\(\.\.\.\))?`")


def _defined_names(path: Path) -> set[str]:
    """Functions, classes, assigned names, dataclass fields and keyword arguments in a module."""
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)  # a field given by name, e.g. Rule(..., gain=...)
    return names


def test_the_table_names_only_what_exists() -> None:
    """Every file a where-to-add row names exists (`<kind>`-style placeholders aside), and every
    `symbol` it names is defined in one of the row's Python files."""
    rows = [line for line in _table_section().splitlines()
            if line.startswith("| ") and not line.startswith("| change")]
    assert len(rows) >= 10
    problems = []
    for row in rows:
        change = row.split("|")[1].strip()
        files = []
        for name in _PATH_RE.findall(row):
            if "<" in name:
                continue
            path = ROOT / name if name.split("/")[0] in ("hotspot", "docs", "tests", "scripts", "skills") \
                else ROOT / "hotspot" / name
            if not path.is_file():
                problems.append(f"{change}: {name} does not exist")
            elif path.suffix == ".py":
                files.append(path)
        defined = set().union(*(_defined_names(f) for f in files)) if files else set()
        problems += [f"{change}: `{s}` is defined in none of {[str(f.relative_to(ROOT)) for f in files]}"
                     for s in _SYMBOL_RE.findall(row) if s not in defined]
    assert not problems, "\n".join(problems)
