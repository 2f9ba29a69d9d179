"""One sweep entry, run as a child process: `python -m hotspot.sweep.job SPEC.json`.

Why a child process that calls the collect API, rather than the sweep calling it in-process or
shelling out to `hotspot collect` several times:
- it is exactly `hotspot collect`'s code path (hotspot.collect.api.collect with the same options),
  pinned to one GPU by HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES set in its environment;
- it leads its own process group, and rocprofv3 and the application stay in that group
  (process.OWN_PROCESS_GROUP = False), so the sweep can stop the whole tree of an entry with one
  killpg (timeout, Ctrl-C) and knows the GPU is free when that group is empty;
- the empty-trace retries, the `analyze --plan` consolidation and the per-entry HTML report happen
  in the same child, so the sweep's scheduling loop never blocks on an analysis;
- if the sweep process dies (kill -9), the kernel's parent-death signal stops the job too.

The outcome is written to `result.json` in the attempt directory; the sweep reads it when the
group has exited. stdout/stderr (the collect progress lines) go to `job.log` beside it.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType

import orjson

from hotspot.result import JsonObject
from hotspot.sweep.recipes import Entry

RESULT = "result.json"
SPEC = "job.json"
PLAN = "plan.json"
REPORT = "report.html"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WIDE_SE_MASK = 0xF
WIDER_SE_MASK = 0xFF
EMPTY_REMEDIES = ("use a larger grid or more waves, set att.target_cu / att.shader_engine_mask in the "
                  "recipe to a CU that runs the kernel, check kernel and iterations match a real dispatch")


def att_variants(entry: Entry, retries: int) -> list[tuple[int, int]]:
    """(target_cu, shader_engine_mask) for the first capture and each retry. Small grids often miss
    the default CU 1 of SE 0: widen the shader-engine mask first (every traced SE then contributes
    its target CU), then move to CU 0 (the first CU the dispatcher fills), then other CUs."""
    first = (entry.target_cu, entry.shader_engine_mask)
    wide = entry.shader_engine_mask | WIDE_SE_MASK
    cands = [first, (entry.target_cu, wide), (0, wide), (0, WIDER_SE_MASK), (2, WIDER_SE_MASK),
             (3, WIDER_SE_MASK)]
    out: list[tuple[int, int]] = []
    for c in cands + [(cu, WIDER_SE_MASK) for cu in range(4, 64)]:
        if c not in out:
            out.append(c)
        if len(out) == retries + 1:
            break
    return out


def _pin_to_parent(parent: int) -> None:
    """Die with the sweep: a kill -9 of the sweep must not leave its entries running on GPUs."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.killpg(0, signal.SIGKILL)


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    os.killpg(0, signal.SIGKILL)  # the whole entry: us, rocprofv3, the application


def _collect_options(entry: Entry, out: Path, cu: int, mask: int, spec: JsonObject,
                     kernel: str | None, iterations: str | None):
    from hotspot.collect.api import CollectOptions
    from hotspot.collect.jobs import AttSettings

    return CollectOptions(
        command=entry.cmd, cwd=Path(entry.cwd), output=out, kernel=kernel, iterations=iterations,
        att=AttSettings(target_cu=cu, se_mask=mask, simd_select=entry.simd_select, buffer_size=entry.buffer_size),
        env=entry.env, pmc=entry.pmc, analyze=False, rocprofv3=spec.get("rocprofv3"),
        att_library_path=spec.get("att_library_path"))


def run_entry(spec: JsonObject) -> JsonObject:
    from hotspot.collect.api import CollectInterrupted, collect
    from hotspot.errors import EmptyTraceError, HotspotError

    entry = Entry.from_json(spec["entry"])
    attempt_dir = Path(spec["attempt_dir"])
    say = lambda m: (sys.stderr.write(m + "\n"), sys.stderr.flush())  # noqa: E731 - the job log
    attempts: list[JsonObject] = []
    kernel, iterations = entry.kernel, entry.iterations
    collected = None
    variants = att_variants(entry, int(spec.get("att_retries", 0)))
    for n, (cu, mask) in enumerate(variants):
        out = attempt_dir / ("collect" if n == 0 else f"collect-retry{n}")
        rec = {"target_cu": cu, "shader_engine_mask": hex(mask), "run_dir": str(out.relative_to(spec["sweep_dir"]))}
        attempts.append(rec)
        say(f"[sweep] capture {n + 1}/{len(variants)}: att_target_cu {cu}, att_shader_engine_mask {hex(mask)}")
        try:
            collected = collect(_collect_options(entry, out, cu, mask, spec, kernel, iterations), say=say).plain_data()
            rec["outcome"] = "ok"
            break
        except EmptyTraceError as err:
            rec.update(outcome=err.code, message=err.message)
            if err.code != "empty-trace":  # no kernel launched at all: another CU will not help
                return {"state": "failed", "exit_code": err.exit_code, "code": err.code, "reason": err.message,
                        "att_attempts": attempts, "run_dir": rec["run_dir"]}
            # Retries trace the same kernel and iterations as the first capture: no new discovery.
            run_json = out / "run.json"
            if run_json.is_file():
                doc = orjson.loads(run_json.read_bytes())
                kernel = kernel or (doc.get("kernel") or {}).get("regex")
                iterations = iterations or (doc.get("iterations") or {}).get("range")
        except CollectInterrupted as err:
            rec.update(outcome="interrupted", message=err.message)
            return {"state": "interrupted", "exit_code": 130, "code": "interrupted", "reason": err.message,
                    "att_attempts": attempts, "run_dir": rec["run_dir"]}
        except HotspotError as err:
            rec.update(outcome=err.code, message=err.message)
            state = "timed-out" if err.code == "timeout" else "failed"
            return {"state": state, "exit_code": err.exit_code, "code": err.code,
                    "reason": err.message + (f" (next: {err.hint})" if err.hint else ""),
                    "att_attempts": attempts, "run_dir": rec["run_dir"]}
    if collected is None:
        tried = ", ".join(f"CU {a['target_cu']}/SE mask {a['shader_engine_mask']}" for a in attempts)
        return {"state": "empty", "exit_code": 4, "code": "empty-trace",
                "reason": f"no wave reached the traced CU in {len(attempts)} capture(s) ({tried}); "
                          f"remedies: {EMPTY_REMEDIES}", "att_attempts": attempts, "run_dir": attempts[-1]["run_dir"]}
    return _consolidate(spec, collected, attempts, say)


def _consolidate(spec: JsonObject, collected: JsonObject, attempts: list[JsonObject], say) -> JsonObject:
    from hotspot.att.analyze import AnalyzeOptions
    from hotspot.errors import HotspotError
    from hotspot.plan.api import analyze_with_plan
    from hotspot.sweep.summary import summarize, traced_dispatch_ns

    sweep_dir = Path(spec["sweep_dir"])
    attempt_dir = Path(spec["attempt_dir"])
    run_dir = Path(collected["run_dir"])
    rel = lambda p: str(Path(p).relative_to(sweep_dir))  # noqa: E731
    result: JsonObject = {"state": "done", "exit_code": 0, "code": None, "reason": None,
                              "att_attempts": attempts, "run_dir": rel(run_dir), "kernel": collected.get("kernel"),
                              "summary": None, "plan_json": None, "report_html": None, "warnings": []}
    dispatch = Path(collected["chosen_dispatch"]["path"])
    say(f"[sweep] analyze --plan {dispatch}")
    try:
        planned = analyze_with_plan(dispatch, AnalyzeOptions(jobs=1))
    except HotspotError as err:
        result.update(state="failed", exit_code=err.exit_code, code=err.code,
                      reason=f"analysis of {dispatch.name} failed: {err.message}")
        return result
    (attempt_dir / PLAN).write_bytes(planned.to_json())
    result["plan_json"] = rel(attempt_dir / PLAN)
    data = orjson.loads(planned.to_json())["data"]
    traced = traced_dispatch_ns(run_dir / "att", collected["chosen_dispatch"].get("dispatch_id"))
    result["summary"] = summarize(data, collected.get("kernel"), traced)
    result["summary"]["dispatch"] = rel(dispatch)  # the manifest holds paths relative to the sweep dir
    result["warnings"] += list(planned.warnings)
    try:
        from hotspot.export.report_file import write_report

        write_report(dispatch, str(attempt_dir / REPORT), False)
        result["report_html"] = rel(attempt_dir / REPORT)
    except HotspotError as err:  # the summary stands; say why there is no page
        result["warnings"].append(f"report: {err.message}")
    return result


def main(argv: list[str]) -> int:
    spec_path = Path(argv[0])
    spec = orjson.loads(spec_path.read_bytes())
    _pin_to_parent(int(spec["parent_pid"]))
    signal.signal(signal.SIGTERM, _on_sigterm)
    from hotspot.collect import process

    process.OWN_PROCESS_GROUP = False
    from hotspot.collect import api as collect_api

    collect_api.STREAM_OUTPUT["on"] = False  # the entry's log holds the program's output
    try:
        result = run_entry(spec)
    except KeyboardInterrupt:
        result = {"state": "interrupted", "exit_code": 130, "code": "interrupted", "reason": "interrupted"}
    except Exception as exc:  # noqa: BLE001 - a bug in one entry must not lose the sweep's record of it
        import traceback

        traceback.print_exc()
        result = {"state": "failed", "exit_code": 1, "code": "internal-error",
                  "reason": f"internal error: {type(exc).__name__}: {exc} (traceback in the log)"}
    tmp = spec_path.with_name(RESULT + ".tmp")
    tmp.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    os.replace(tmp, spec_path.with_name(RESULT))
    return int(result.get("exit_code") or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
