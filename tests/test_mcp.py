"""`hotspot mcp`: a real stdio session with the MCP SDK's client against the server process.

Every tool answer is compared with what the command line prints for the same options (run
in-process here, the same code path a user's shell would take)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli
from tests.fake_rocprofv3.helpers import app, fake  # noqa: F401 - the fixture

mcp = pytest.importorskip("mcp", reason="the MCP SDK (pip install -e '.[mcp]') is not installed")

import anyio  # noqa: E402 - the SDK's dependency
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp import types  # noqa: E402

CK = ("att", "gfx942", "ck_bmm")
D1 = CORPUS.joinpath(*CK, "ui_output_agent_5600_dispatch_1")
D2 = CORPUS.joinpath(*CK, "ui_output_agent_5600_dispatch_2")
SMALL = CORPUS / "layouts/kernel-lab/blockscale_preshuffle_gemm/att_viewer/big/ui_output_agent_14065_dispatch_120"
WHOLE = 1 << 20  # max_bytes that holds any corpus document whole (the default cap pages them)
PASSED_ENV = ("PATH", "HOME", "HOTSPOT_CACHE", "ROCPROF_ATT_LIBRARY_PATH", "FAKE_ROCPROF_LOG",
              "FAKE_ROCPROF_MODE", "FAKE_ROCPROF_WORKLOAD", "XDG_CACHE_HOME")


def _params(cwd: Path, *server_args: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    return StdioServerParameters(command=sys.executable, args=["-m", "hotspot", "mcp", *server_args],
                                 env=env, cwd=str(cwd))


def _session(cwd: Path, roots: list[Path] | None, *server_args: str, log: Path | None = None):
    """Run `body(session)` inside a client session with the given roots (None: no roots
    capability: the server falls back to --root); the server's stderr goes to `log` if given."""

    async def list_roots(_ctx):  # noqa: ANN001, ANN202
        return types.ListRootsResult(roots=[types.Root(uri=p.resolve().as_uri()) for p in roots or []])

    def run(body):  # noqa: ANN001, ANN202
        async def main():  # noqa: ANN202
            with open(log or os.devnull, "w") as errlog:
                async with stdio_client(_params(cwd, *server_args), errlog=errlog) as (r, w):
                    async with ClientSession(r, w, list_roots_callback=list_roots if roots is not None
                                             else None) as s:
                        await s.initialize()
                        return await body(s)

        return anyio.run(main)

    return run


def _doc(res: types.CallToolResult) -> str:
    assert len(res.content) == 1 and res.content[0].type == "text"
    return res.content[0].text


def _cli_doc(*argv: str) -> str:
    r = run_cli(*argv)
    return r.stdout.rstrip("\n")


def test_tools_listed_with_schemas_from_the_cli_options(corpus: Path, tmp_path: Path) -> None:
    async def body(s):  # noqa: ANN001, ANN202
        return (await s.list_tools()).tools

    tools = {t.name: t for t in _session(tmp_path, [corpus])(body)}
    assert set(tools) == {"analyze", "plan", "diff", "pmc", "kernels", "occupancy", "doctor", "collect",
                          "sweep_status", "sweep_report", "report", "export"}
    # each property is one of the command's own options (`hotspot plan --help` lists them)
    plan = tools["plan"].input_schema
    assert set(plan["properties"]) == {"path", "pmc", "kernel", "arch", "meta", "detail_level", "cursor", "max_bytes"}
    assert plan["required"] == ["path"] and plan["properties"]["pmc"]["type"] == "array"
    occ = tools["occupancy"].input_schema
    assert occ["properties"]["vgpr"]["type"] == "integer" and set(occ["required"]) == {"arch", "vgpr"}
    assert tools["analyze"].input_schema["properties"]["max_file_mb"]["type"] == "number"
    # no default: the JSON an MCP tool answers keeps every row unless topk is given (analyze --help)
    topk = tools["analyze"].input_schema["properties"]["topk"]
    assert "default" not in topk and topk["type"] == "integer"
    assert tools["collect"].input_schema["properties"]["command"]["type"] == "array"
    assert tools["sweep_status"].input_schema["required"] == ["dir"]
    # docs/cli/mcp.md: sweep_report takes dir, html and force; report and export must name their file
    assert set(tools["sweep_report"].input_schema["properties"]) == {"dir", "html", "force", "cursor", "max_bytes"}
    assert set(tools["report"].input_schema["required"]) == {"path", "output"}
    assert set(tools["export"].input_schema["required"]) == {"path", "output"}
    assert tools["report"].annotations.read_only_hint is False and tools["plan"].annotations.read_only_hint


def test_calls_answer_what_the_cli_prints(corpus: Path, tmp_path: Path) -> None:
    calls = [
        ("plan", {"path": str(D1)}, ["plan", str(D1), "--brief", "--format", "json"]),
        ("plan", {"path": str(D2), "detail_level": "full", "max_bytes": WHOLE}, ["plan", str(D2), "--format", "json"]),
        ("analyze", {"path": str(D2)}, ["analyze", str(D2), "--brief", "--format", "json"]),
        ("analyze", {"path": str(D1), "detail_level": "full", "plan": True, "topk": 3, "max_bytes": WHOLE},
         ["analyze", str(D1), "--topk", "3", "--plan", "--format", "json"]),
        ("diff", {"before": str(D1), "after": str(D2), "max_bytes": WHOLE},
         ["diff", str(D1), str(D2), "--format", "json"]),
        ("occupancy", {"arch": "gfx942", "vgpr": 128}, ["occupancy", "--arch", "gfx942", "--vgpr", "128",
                                                        "--format", "json"]),
    ]

    async def body(s):  # noqa: ANN001, ANN202
        return [await s.call_tool(name, args) for name, args, _ in calls]

    results = _session(tmp_path, [corpus])(body)
    for (name, _, argv), res in zip(calls, results):
        cli = run_cli(*argv)
        # a tool error exactly when the command line exits non-zero: the diff of D1 (a fill kernel)
        # and D2 (the GEMM) is two different kernels, not comparable (exit 8), its rows still given
        assert (res.is_error, cli.exit_code) in ((False, 0), (True, 8)) and (name == "diff") is res.is_error, name
        assert _doc(res) == cli.stdout.rstrip("\n"), name
    brief = json.loads(_doc(results[0]))
    assert brief["data"]["detail"] == "brief" and len(_doc(results[0]).encode()) <= 4096


def test_errors_are_tool_errors_with_code_and_fix(corpus: Path, tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "escape").symlink_to(corpus)  # a link inside the root, to outside it
    missing = tmp_path / "inside" / "nope"

    async def body(s):  # noqa: ANN001, ANN202
        return [await s.call_tool("plan", {"path": str(missing)}),
                await s.call_tool("plan", {"path": str(D1)}),
                await s.call_tool("plan", {"path": str(tmp_path / "inside" / "escape" / D1.relative_to(corpus))}),
                await s.call_tool("plan", {"path": str(missing), "topk": 3}),
                await s.call_tool("occupancy", {"arch": "gfx942", "vgpr": "many"}),
                await s.call_tool("occupancy", {"arch": "gfx942", "vgpr": -5})]

    bad, outside, linked, unknown, wrong_type, bad_value = _session(tmp_path, [tmp_path / "inside"])(body)
    for res in (bad, outside, linked, unknown, wrong_type, bad_value):
        assert res.is_error is True
    doc = json.loads(_doc(bad))
    assert doc["ok"] is False and doc["error"]["code"] == "bad-input" and doc["error"]["exit_code"] == 3
    assert str(missing) in doc["error"]["message"] and doc["error"]["hint"]
    assert _doc(bad) == _cli_doc("plan", str(missing), "--brief", "--format", "json")
    for res in (outside, linked):
        err = json.loads(_doc(res))["error"]
        assert err["code"] == "outside-roots" and err["exit_code"] == 3 and "roots" in err["hint"]
    assert json.loads(_doc(unknown))["error"]["code"] == "usage"
    assert "topk" in json.loads(_doc(unknown))["error"]["message"]
    assert json.loads(_doc(wrong_type))["error"]["code"] == "usage"
    assert _doc(bad_value) == _cli_doc("occupancy", "--arch", "gfx942", "--vgpr", "-5", "--format", "json")


def test_without_client_roots_the_server_roots_apply(corpus: Path, tmp_path: Path) -> None:
    async def body(s):  # noqa: ANN001, ANN202
        return [await s.call_tool("plan", {"path": str(D1)}),
                await s.call_tool("plan", {"path": "/"})]

    inside, outside = _session(tmp_path, None, "--root", str(corpus))(body)
    assert inside.is_error is False
    assert json.loads(_doc(outside))["error"]["code"] == "outside-roots"


def test_root_adds_to_the_roots_the_client_grants(corpus: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"  # what an assistant grants: its project folder
    workspace.mkdir()

    async def body(s):  # noqa: ANN001, ANN202
        return [await s.call_tool("plan", {"path": str(D1)}),               # via --root
                await s.call_tool("plan", {"path": str(workspace / "x")}),  # via the client: read, missing
                await s.call_tool("plan", {"path": str(tmp_path)})]         # neither

    added, granted, neither = _session(tmp_path, [workspace], "--root", str(corpus))(body)
    assert added.is_error is False
    assert json.loads(_doc(granted))["error"]["code"] == "bad-input"  # inside a root: the command ran
    err = json.loads(_doc(neither))["error"]
    assert err["code"] == "outside-roots" and "--root" in err["hint"]
    assert str(workspace) in err["message"] and str(corpus.resolve()) in err["message"]


def test_repeat_call_is_remembered_until_the_capture_changes(corpus: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOTSPOT_CACHE", "on")  # the tests' default is off, which turns the layer off
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    capture = tmp_path / SMALL.name
    shutil.copytree(SMALL, capture)
    code = capture / "code.json"
    old = time.time() - 60
    time.sleep(2.1)  # settled (hotspot/cache/deps.py RACY_NS): not modified while a call reads it

    async def body(s):  # noqa: ANN001, ANN202
        first = await s.call_tool("plan", {"path": str(capture)})
        again = await s.call_tool("plan", {"path": str(capture)})
        os.utime(code, (old + 1, old + 1))  # the capture changed: read again
        changed = await s.call_tool("plan", {"path": str(capture)})
        return first, again, changed

    first, again, changed = _session(tmp_path, [tmp_path])(body)
    assert [r.meta["hotspot/remembered"] for r in (first, again, changed)] == [False, True, False]
    assert _doc(first) == _doc(again) == _doc(changed) == _cli_doc("plan", str(capture), "--brief",
                                                                     "--format", "json")


def test_two_concurrent_calls(corpus: Path, tmp_path: Path) -> None:
    async def body(s):  # noqa: ANN001, ANN202
        out: dict[str, types.CallToolResult] = {}

        async def call(key: str, name: str, args: dict) -> None:
            out[key] = await s.call_tool(name, args)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "a", "analyze", {"path": str(D2), "detail_level": "full", "max_bytes": WHOLE})
            tg.start_soon(call, "b", "plan", {"path": str(D1)})
        return out

    out = _session(tmp_path, [corpus])(body)
    assert _doc(out["a"]) == _cli_doc("analyze", str(D2), "--format", "json")
    assert _doc(out["b"]) == _cli_doc("plan", str(D1), "--brief", "--format", "json")


def test_cancelled_collect_leaves_an_interrupted_run_dir(fake, tmp_path: Path) -> None:  # noqa: F811
    pidfile = tmp_path / "app.pid"
    run_dir = tmp_path / "run"
    program = app("import os, time", f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))",
                  "time.sleep(60)")

    async def body(s):  # noqa: ANN001, ANN202
        progress: list[str] = []

        async def on_progress(_p, _t, message):  # noqa: ANN001, ANN202
            progress.append(message or "")

        started = time.monotonic()
        with anyio.move_on_after(60) as scope:
            async with anyio.create_task_group() as tg:
                async def collect() -> None:
                    await s.call_tool("collect", {"command": program, "kernel": "vec_add",
                                                  "output": str(run_dir)}, progress_callback=on_progress)

                tg.start_soon(collect)
                while not pidfile.exists() or not pidfile.read_text():
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()  # the client cancels the call (notifications/cancelled)
        assert not scope.cancelled_caught, "the profiled program never started"
        # the server is still serving, and finished the interrupted run before answering this
        after = await s.call_tool("occupancy", {"arch": "gfx942", "vgpr": 64})
        return progress, after, time.monotonic() - started

    progress, after, _elapsed = _session(tmp_path, [tmp_path])(body)
    assert any("run directory" in m for m in progress), progress
    assert after.is_error is False
    deadline = time.monotonic() + 20
    record = {}
    while time.monotonic() < deadline:
        record = json.loads((run_dir / "run.json").read_text())
        if record.get("status") == "interrupted":
            break
        time.sleep(0.1)
    assert record["status"] == "interrupted", record
    assert record["phases"][-1]["status"] == "interrupted"
    said = json.dumps(record)  # what stopped it: the client's cancellation, not a Ctrl-C
    assert "cancelled by the MCP client" in said and "Ctrl-C" not in said, said
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):  # the profiled program was stopped
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)


def test_a_call_the_client_gives_up_is_logged_as_cancelled_not_as_ctrl_c(fake, tmp_path: Path) -> None:  # noqa: F811
    # issue 37: a request that timed out, and a call in flight when the client closed, were logged
    # as "interrupted by Ctrl-C (SIGINT)" though no one pressed Ctrl-C. A collect of a program that
    # sleeps is a call that lasts until it is stopped.
    log = tmp_path / "server.log"
    pids = [tmp_path / "first.pid", tmp_path / "second.pid"]

    def collect_args(n: int) -> dict:
        program = app("import os, time", f"open({str(pids[n])!r}, 'w').write(str(os.getpid()))",
                      "time.sleep(60)")
        return {"command": program, "kernel": "vec_add", "output": str(tmp_path / f"run{n}")}

    async def started(n: int) -> None:
        while not pids[n].exists() or not pids[n].read_text():
            await anyio.sleep(0.05)

    async def body(s):  # noqa: ANN001, ANN202
        with pytest.raises(Exception, match="timed out"):  # the program runs long before 3 s
            await s.call_tool("collect", collect_args(0), read_timeout_seconds=3)
        assert pids[0].exists()
        for _ in range(400):  # the server stops the call and logs it
            if log.read_text().endswith("\n"):
                break
            await anyio.sleep(0.05)
        timed_out = log.read_text()
        async with anyio.create_task_group() as tg:  # in flight when the session closes
            tg.start_soon(s.call_tool, "collect", collect_args(1))
            await started(1)
            tg.cancel_scope.cancel()
        return timed_out

    timed_out = _session(tmp_path, [tmp_path], log=log)(body)
    assert timed_out.startswith("hotspot collect: ") and "cancelled by the MCP client" in timed_out, timed_out
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and log.read_text().count("cancelled by the MCP client") < 2:
        time.sleep(0.1)
    text = log.read_text()
    assert text.count("cancelled by the MCP client") == 2 and "Ctrl-C" not in text and "SIGINT" not in text, text
    for n in (0, 1):
        assert json.loads((tmp_path / f"run{n}" / "run.json").read_text())["status"] == "interrupted"


def test_mcp_without_the_sdk_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp -> ImportError
    monkeypatch.setitem(sys.modules, "mcp.server", None)
    monkeypatch.setitem(sys.modules, "mcp.server.lowlevel", None)
    r = run_cli("mcp")
    assert r.exit_code == 5
    assert "pip install 'hotspot[mcp]'" in r.stderr and r.stdout == ""


def test_print_mcp_registration_starts_a_working_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = run_cli("skill", "install", "--print-mcp", "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json()["data"]
    entry = d["mcp_servers"]["mcpServers"]["hotspot"]
    assert entry == {"command": d["command"], "args": ["mcp"]}
    assert d["command_lines"]["claude-code"] == f"claude mcp add hotspot -- {d['command']} mcp"
    assert d["sdk_installed"] is True
    assert not (Path.cwd() / ".claude" / "skills" / "hotspot" / "mcp").exists()  # nothing installed

    async def main():  # noqa: ANN202 - the entry, as an assistant would start it
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env,
                                       cwd=str(tmp_path))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (rd, wr):
                async with ClientSession(rd, wr) as s:
                    await s.initialize()
                    return [t.name for t in (await s.list_tools()).tools]

    assert "plan" in anyio.run(main)
    # the text is for copy and paste: every command whole on one line, however narrow the terminal
    monkeypatch.setenv("COLUMNS", "40")
    text = run_cli("skill", "install", "--print-mcp").stdout.splitlines()
    for line in d["command_lines"].values():
        assert line in text, line
    start = text.index("{")
    assert json.loads("\n".join(text[start:text.index("}", start) + 1])) == d["mcp_servers"]
    assert f"{d['command_lines']['claude-code']} --root /path/to/captures" in text
    assert run_cli("skill", "install", "--print-mcp", "--dest", str(tmp_path)).exit_code == 2


def test_result_cache_is_shared_with_the_cli(corpus: Path, tmp_path: Path) -> None:
    """A capture the command line analyzed is not analyzed again by the server: its call reads the
    CLI's derived entry (the cache folder gains no entry), and answers what the CLI printed."""
    import subprocess

    cache = tmp_path / "xdg"
    env = {**os.environ, "HOTSPOT_CACHE": "on", "XDG_CACHE_HOME": str(cache)}
    cli = subprocess.run([sys.executable, "-m", "hotspot", "plan", str(D2), "--format", "json"], env=env,
                         capture_output=True, check=True, cwd=tmp_path).stdout.rstrip(b"\n")
    folder = cache / "hotspot"
    before = sorted(p.name for p in folder.iterdir())
    derived = [n for n in before if not n.startswith("out")]
    assert derived, before  # the CLI stored its analysis

    async def body(s):  # noqa: ANN001, ANN202
        return await s.call_tool("plan", {"path": str(D2), "detail_level": "full", "max_bytes": WHOLE})

    saved = {k: os.environ.get(k) for k in ("HOTSPOT_CACHE", "XDG_CACHE_HOME")}
    os.environ.update({"HOTSPOT_CACHE": "on", "XDG_CACHE_HOME": str(cache)})
    try:
        res = _session(tmp_path, [corpus])(body)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert _doc(res).encode() == cli
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing computed anew, nothing stored


CAP = 16 * 1024  # the default answer size (docs/cli/mcp.md)
SPILL = CORPUS / "att/gfx942/hipkittens_gemm_spill/ui_output_agent_18224_dispatch_48"


def _dry_sweep(tmp_path: Path, n: int) -> Path:
    """A Slurm sweep planned but not submitted (--dry-run): n pending entries, nothing run."""
    from hotspot.sweep import api
    from tests.sweep_support import entry, write_recipes

    recipes = write_recipes(tmp_path / "lib.yaml", [entry(f"k{i:03d}", 0.0, tmp_path / "rec.jsonl")
                                                    for i in range(n)])
    r = api.run_sweep(api.SweepOptions(recipes=recipes, new=True, slurm=True, dry_run=True), cwd=tmp_path)
    return Path(r.data.sweep_dir)


async def _paged(s, name: str, args: dict) -> tuple[dict, list[int]]:  # noqa: ANN001
    """The call's whole document put back together from its first answer and every page of each
    list it cut (a page may cut the lists inside an item too large alone: their cursors join the
    queue), with the size of each answer."""
    first = await s.call_tool(name, args)  # doctor fails where no ROCm is installed: still compared
    sizes = [len(_doc(first).encode())]
    doc = json.loads(_doc(first))
    queue = list(doc.pop("page", {"more": []})["more"])

    def at(path: str) -> list:
        node = doc
        for key in path.split("."):
            node = node[int(key)] if isinstance(node, list) else node[key]
        return node

    while queue:
        more = queue.pop(0)
        target = at(more["list"])
        assert len(target) == more["returned"] < more["total"]
        cursor = more["cursor"]
        while cursor:
            res = await s.call_tool(name, {**args, "cursor": cursor})
            assert res.is_error is False, _doc(res)
            assert res.meta["hotspot/remembered"] is True  # the kept document: nothing run again
            sizes.append(len(_doc(res).encode()))
            page = json.loads(_doc(res))
            assert page["data"]["list"] == more["list"] and page["data"]["offset"] == len(target)
            assert page["data"]["items"], "a page holds at least one item"
            target.extend(page["data"]["items"])
            cursor = None
            for nxt in page["page"]["more"]:
                if nxt["list"] == more["list"]:
                    cursor = nxt["cursor"]
                else:
                    queue.append(nxt)
        assert len(target) == more["total"]
    return doc, sizes


@pytest.mark.usefixtures("shared_analyses")  # the server and the CLI it is compared with: one analysis each
def test_every_answer_fits_16_kb_and_pages_return_every_item_once(corpus: Path, tmp_path: Path) -> None:
    sweep = _dry_sweep(tmp_path, 80)  # 80 entries: ~25 KB of entries
    pmc_dir = CORPUS / "pmc/rocprof-compute_MI300X_bmm1"
    trace_csv = CORPUS / "csv/kernel_trace.csv"
    calls = [
        ("analyze", {"path": str(SPILL), "detail_level": "full", "plan": True, "topk": 0},
         ["analyze", str(SPILL), "--topk", "0", "--plan"]),
        ("analyze", {"path": str(D1)}, ["analyze", str(D1), "--brief"]),
        ("plan", {"path": str(D2), "detail_level": "full"}, ["plan", str(D2)]),
        ("diff", {"before": str(D1), "after": str(D2)}, ["diff", str(D1), str(D2)]),
        ("kernels", {"path": str(trace_csv)}, ["kernels", str(trace_csv)]),
        ("pmc", {"paths": [str(pmc_dir)]}, ["pmc", str(pmc_dir)]),
        ("occupancy", {"arch": "gfx942", "vgpr": 256}, ["occupancy", "--arch", "gfx942", "--vgpr", "256"]),
        ("doctor", {}, ["doctor"]),
        ("sweep_status", {"dir": str(sweep)}, ["sweep", "status", str(sweep)]),
        ("sweep_report", {"dir": str(sweep)}, ["sweep", "report", str(sweep)]),
    ]

    async def body(s):  # noqa: ANN001, ANN202
        tools = {t.name for t in (await s.list_tools()).tools}
        out = [await _paged(s, name, args) for name, args, _ in calls]
        written = [await s.call_tool(name, args) for name, args in writes]
        again = await s.call_tool("report", writes[0][1])  # the file exists now: refused without force
        refused = [await s.call_tool("report", {"path": str(SMALL), "output": str(corpus.parent / "r.html")}),
                   await s.call_tool("export", {"path": str(SMALL), "output": "-"})]
        stranger = json.loads(_doc(await s.call_tool("diff", {"before": str(D1), "after": str(D2)})))
        cursor = stranger["page"]["more"][0]["cursor"]
        misused = await s.call_tool("diff", {"before": str(D2), "after": str(D1), "cursor": cursor})
        return tools, out, misused, written, again, refused

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    writes = [("report", {"path": str(SMALL), "output": str(out_dir / "r.html")}),
              ("export", {"path": str(SMALL), "output": str(out_dir / "t.json"), "instructions": True}),
              ("sweep_report", {"dir": str(sweep), "html": str(out_dir / "sweep.html")})]
    tools, out, misused, written, again, refused = _session(tmp_path, [corpus, tmp_path])(body)
    # every tool but collect (it runs a profiler: tests/test_collect_*.py) is called here
    assert tools - {"collect"} == {name for name, _, _ in calls} | {name for name, _ in writes}
    for (name, args), res in zip(writes, written):
        doc = json.loads(_doc(res))
        assert res.is_error is False and len(_doc(res).encode()) <= CAP, _doc(res)
        target = Path(args.get("output") or args["html"])
        assert doc["data"].get("output", doc["data"].get("html")) == str(target), name
        assert target.stat().st_size > 0
    assert (out_dir / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert (out_dir / "sweep.html").read_text().startswith("<!DOCTYPE html>")
    trace = json.loads((out_dir / "t.json").read_text())
    assert json.loads(_doc(written[1]))["data"]["events"] == len(trace["traceEvents"])
    err = json.loads(_doc(again))["error"]
    assert again.is_error and "`force: true`" in err["hint"] and "--force" not in err["hint"]
    outside, stdout = (json.loads(_doc(r))["error"] for r in refused)
    assert outside["code"] == "outside-roots" and not (corpus.parent / "r.html").exists()
    assert stdout["code"] == "usage" and "output" in stdout["message"]
    paged = set()
    for (name, _, argv), (doc, sizes) in zip(calls, out):
        assert max(sizes) <= CAP, (name, sizes)
        whole = json.loads(run_cli(*argv, "--format", "json").stdout)
        if "error" in whole:  # doctor without ROCm: the same error, its hint in tool terms
            whole["error"] = {**whole["error"], "message": doc["error"]["message"], "hint": doc["error"]["hint"]}
        assert doc == whole, name  # each item exactly once, in order
        if len(sizes) > 1:
            paged.add(name)
    assert {"analyze", "plan", "diff", "sweep_status", "sweep_report"} <= paged  # over 16 KB whole
    err = json.loads(_doc(misused))["error"]
    assert misused.is_error and err["code"] == "usage" and "cursor" in err["hint"]


def test_hints_name_tool_arguments_over_mcp_and_flags_on_the_cli(corpus: Path, tmp_path: Path) -> None:
    folder = D1.parent  # two dispatches: `--all` with the brief view is refused before any analysis

    async def body(s):  # noqa: ANN001, ANN202
        return [await s.call_tool("analyze", {"path": str(folder), "all": True}),
                await s.call_tool("kernels", {"path": str(corpus / "csv/kernel_trace.csv"), "top": -1})]

    both, top = _session(tmp_path, [corpus])(body)
    cli = json.loads(_cli_doc("analyze", str(folder), "--all", "--brief", "--format", "json"))["error"]
    assert "drop --brief" in cli["hint"] and "drop --all" in cli["hint"]  # the command line: flags
    err = json.loads(_doc(both))["error"]
    assert both.is_error and err["code"] == cli["code"] == "usage"
    assert err["hint"] == 'leave out `all`, or pass `detail_level: "full"` for the full JSON'
    assert "--" not in err["message"] + err["hint"]
    cli_top = json.loads(_cli_doc("kernels", str(corpus / "csv/kernel_trace.csv"), "--top", "-1", "--format",
                                  "json"))["error"]
    assert cli_top["message"] == "--top -1 is negative"
    assert json.loads(_doc(top))["error"] == {**cli_top, "message": "`top` -1 is negative"}


def test_with_the_cache_off_every_call_runs_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # HOTSPOT_CACHE=off turns off the in-process layer too: a repeat is a fresh run (issue 37's
    # fresh-in-server measurement relies on it)
    from hotspot.mcp.invoke import Remembered

    argv = ["occupancy", "--arch", "gfx942", "--vgpr", "64", "--format", "json"]
    monkeypatch.setenv("HOTSPOT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    layer = Remembered()
    first = layer.run(argv)
    assert first.exit_code == 0 and layer.run(argv).remembered is True
    monkeypatch.setenv("HOTSPOT_CACHE", "off")
    again = layer.run(argv)
    assert again.remembered is False and again.document == first.document


def test_a_repeat_report_is_remembered_while_its_file_is_the_one_it_wrote(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOTSPOT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    capture = tmp_path / SMALL.name
    shutil.copytree(SMALL, capture)
    time.sleep(2.1)  # settled (hotspot/cache/deps.py RACY_NS)
    page = tmp_path / "out" / "r.html"
    page.parent.mkdir()
    args = {"path": str(capture), "output": str(page), "force": True}

    async def body(s):  # noqa: ANN001, ANN202
        first = await s.call_tool("report", args)
        written = page.stat()
        again = await s.call_tool("report", args)
        kept = page.stat()
        page.write_text("edited")  # no longer what the call wrote: it runs and writes again
        edited = await s.call_tool("report", args)
        unforced = await s.call_tool("report", {"path": str(capture), "output": str(page)})
        return first, written, again, kept, edited, unforced

    first, written, again, kept, edited, unforced = _session(tmp_path, [tmp_path])(body)
    assert [r.is_error for r in (first, again, edited)] == [False, False, False]
    assert [r.meta["hotspot/remembered"] for r in (first, again, edited)] == [False, True, False]
    assert _doc(first) == _doc(again) == _doc(edited)
    assert (kept.st_ino, kept.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # left as written
    assert page.read_text().startswith("<!DOCTYPE html>")
    # without force a repeat refuses the existing file, as the command line does
    error = json.loads(_doc(unforced))["error"]
    assert unforced.is_error and error["code"] == "bad-input" and "already exists" in error["message"]


def test_preload_names_modules_that_exist_and_yields_to_a_call() -> None:
    # the server imports these in the background once idle after tools/list; a renamed module
    # would be skipped silently there (its first call would pay for it again)
    import importlib.util

    from hotspot.mcp.server import PRELOAD, Preload

    assert all(importlib.util.find_spec(name) is not None for name in PRELOAD), PRELOAD
    name = "email.mime.audio"  # a standard module nothing here has imported
    assert name not in sys.modules
    p = Preload((name, "no_such_module_here"), idle_s=0.01)
    p.wait()  # not started: returns at once
    p.start()
    p.start()
    time.sleep(0.5)
    p.wait()
    assert p.done.is_set() and name in sys.modules  # the missing module was skipped
    early = Preload(("email.mime.image",), idle_s=30)
    early.start()
    t = time.monotonic()
    early.wait()  # a call before the server was idle: the preload stands down at once
    assert time.monotonic() - t < 5 and early.done.is_set() and "email.mime.image" not in sys.modules
