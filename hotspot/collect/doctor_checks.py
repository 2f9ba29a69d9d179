"""`hotspot doctor`: is this machine ready to collect? Each check says pass/warn/fail and the fix."""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from hotspot.arch.targets import TESTED_GFX
from hotspot.collect import rocm_tools as tools
from hotspot.result import Result
from hotspot.record import record

# rocprofv3-doctor exit codes (PEERS.md §5): 0 all good, 1 warnings, 2 failures.
_DOCTOR_STATUS = {0: "pass", 1: "warn", 2: "fail"}


@record
class Check:
    name: str
    status: str  # pass | warn | fail | skip
    required: bool
    detail: str
    fix: str = ""


@record(frozen=False)
class DoctorReport:
    ok: bool
    checks: list[Check]
    rocprofv3: dict[str, Any] | None
    decoder: dict[str, Any] | None
    gpus: list[dict[str, Any]]
    rocprofv3_doctor: dict[str, Any] | None = None
    missing: list[str] = field(default_factory=list)
    # analyze, plan, report, diff and export need none of the collection tools: only hotspot's
    # own wave reader (native or pure Python), so they are ready where collection is not
    analysis_ready: bool = True
    checked_for: str = "both"  # --for: analyze | collect | both (which verdict decides the exit)


def _rocprofv3_doctor(rocprofv3: str | None) -> tuple[Check, dict[str, Any] | None]:
    tool = tools.find_tool("rocprofv3-doctor", rocprofv3)
    if not tool:
        return Check("rocprofv3-doctor", "skip", False,
                     "rocprofv3-doctor not found (ships with newer rocprofiler-sdk); its checks were not run"), None
    code, out, err = tools.probe([tool, "--format", "json"], timeout=tools.DOCTOR_TIMEOUT_S)
    if code is None:
        return Check("rocprofv3-doctor", "warn", False, f"{tool} could not run: {err.strip()}",
                     f"run `{tool} --format json` by hand"), None
    try:
        findings = json.loads(out)
    except ValueError:
        findings = None
    status = _DOCTOR_STATUS.get(code, "warn")
    detail = f"{tool} exited {code}"
    if findings is None:
        detail += "; its output was not JSON"
        status = "warn" if status == "pass" else status
    fix = "" if status == "pass" else f"read the remediation in `{tool} --format json` (included below)"
    return Check("rocprofv3-doctor", status, False, detail, fix), \
        {"path": tool, "exit_code": code, "findings": findings, "stderr_tail": err.strip()[-2000:]}


def _native_scanner() -> Check:
    from hotspot.att.engine.native import native_status

    status = native_status()
    if status == "enabled":
        return Check("native wave scanner", "pass", False, "hotspot/att/engine/_wavescan.c is built and in use")
    fix = ("rebuild it: pip install -e . (an editable install) or pip install --force-reinstall ."
           if status.startswith("out of date") else
           "reinstall hotspot with a C compiler and the Python headers present "
           "(e.g. apt install gcc python3-dev; pip install --force-reinstall .)")
    return Check("native wave scanner", "warn", False,
                 f"{status}; wave files are parsed in pure Python (same results, several times slower)", fix)


PURPOSES = ("analyze", "collect")  # `doctor --for`


def run_doctor(rocprofv3: str | None = None, att_library_path: str | None = None,
               checked_for: str = "both") -> Result[DoctorReport]:
    checks: list[Check] = []
    warnings: list[str] = []
    found = tools.find_rocprofv3(rocprofv3)
    prof_info = None
    if found is None:
        where = f"--rocprofv3 {rocprofv3}" if rocprofv3 else "PATH, $ROCM_PATH/bin or /opt/rocm/bin"
        checks.append(Check("rocprofv3", "fail", True, f"rocprofv3 not found in {where}", tools.FIX_ROCPROFV3))
    else:
        version, line = tools.rocprofv3_version(found.path)
        prof_info = {"path": found.path, "found_by": found.source, "version": version, "version_text": line}
        if version is None:
            checks.append(Check("rocprofv3", "warn", True,
                                f"{found.path} (via {found.source}) but `--version` failed: {line}",
                                "check that the ROCm install is complete (run it by hand)"))
        else:
            checks.append(Check("rocprofv3", "pass", True, f"{found.path} (via {found.source}), version {version}"))

    dec = tools.find_decoder(att_library_path, found.path if found else None)
    dec_info = None
    if dec is None:
        looked = (f"--att-library-path {att_library_path}" if att_library_path else
                  "ROCPROF_ATT_LIBRARY_PATH, LD_LIBRARY_PATH, $ROCM_PATH/lib, /opt/rocm/lib, rocm-sdk")
        checks.append(Check("trace decoder", "fail", True,
                            f"{tools.DECODER_LIBRARY} not found in {looked}; ATT capture fails with "
                            "'rocprof-trace-decoder library path not found'", tools.FIX_DECODER))
    else:
        dec_info = {"path": dec.path, "found_by": dec.source}
        checks.append(Check("trace decoder", "pass", True, f"{dec.path} (via {dec.source})"))

    gpus, how = tools.list_gpus(found.path if found else None)
    if not gpus:
        checks.append(Check("GPUs", "warn", False, f"no GPU found ({how})",
                            "run on a node with an AMD Instinct GPU; check that /dev/kfd and /dev/dri are "
                            "accessible (user in the video and render groups)"))
    else:
        listed = ", ".join(f"{g.index}: {g.gfx} {g.product}".strip() for g in gpus)
        odd = sorted({g.gfx for g in gpus} - set(TESTED_GFX))
        if odd:
            checks.append(Check("GPUs", "warn", False, f"{listed} (via {how})",
                                f"{', '.join(odd)} is not a target hotspot's analyses are tuned for "
                                f"({', '.join(TESTED_GFX)}); results may be incomplete"))
        else:
            checks.append(Check("GPUs", "pass", False, f"{listed} (via {how})"))

    doc_check, doc_info = _rocprofv3_doctor(found.path if found else None)
    checks.append(doc_check)
    scanner = _native_scanner()
    checks.append(scanner)

    missing = [c.name for c in checks if c.required and c.status == "fail"]
    # --for analyze: the collection checks stay in the table but are not warned about
    for c in checks if checked_for != "analyze" else [scanner]:
        if c.status in ("warn", "fail"):
            warnings.append(f"{c.name}: {c.detail}" + (f" (fix: {c.fix})" if c.fix else ""))
    report = DoctorReport(ok=not missing, checks=checks, rocprofv3=prof_info, decoder=dec_info,
                          gpus=[{"index": g.index, "gfx": g.gfx, "product": g.product, "source": g.source}
                                for g in gpus],
                          rocprofv3_doctor=doc_info, missing=missing,
                          analysis_ready=scanner.status != "fail", checked_for=checked_for)
    return Result("doctor", report, warnings)
