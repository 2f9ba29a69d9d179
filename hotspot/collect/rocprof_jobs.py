"""rocprofv3 jobs: the input.yaml text and the equivalent command-line options.

rocprofv3 reads ONLY the top-level `jobs` list of an input file (FORMATS.md §2): the predecessor's
top-level `GlobalParameters`/`pmc` keys were silently ignored. Every setting therefore lives inside a
job, under the long option name with `-` → `_`. Hex masks are written as "0x..." strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from hotspot.record import record

OUTPUT_FILE = "out"  # -o: files become out_kernel_trace.csv, out_agent_info.csv, ...
DISCOVER_OUTPUT_FILE = "discover"

# Tool defaults (FORMATS.md §2); att_buffer_size is ONE buffer shared by all shader engines.
DEFAULT_TARGET_CU = 1
DEFAULT_SE_MASK = 0x1
DEFAULT_SIMD_SELECT = 0xF
DEFAULT_BUFFER_SIZE = 0x10000000

# job key → rocprofv3 command-line option, for --flags
_FLAG = {
    "kernel_include_regex": "--kernel-include-regex",
    "kernel_iteration_range": "--kernel-iteration-range",
    "output_directory": "-d",
    "output_file": "-o",
    "output_format": "-f",
    "kernel_trace": "--kernel-trace",
    "advanced_thread_trace": "--att",
    "att_target_cu": "--att-target-cu",
    "att_shader_engine_mask": "--att-shader-engine-mask",
    "att_simd_select": "--att-simd-select",
    "att_buffer_size": "--att-buffer-size",
    "att_library_path": "--att-library-path",
    "pmc": "--pmc",
}


@record
class AttSettings:
    target_cu: int = DEFAULT_TARGET_CU
    se_mask: int = DEFAULT_SE_MASK
    simd_select: int = DEFAULT_SIMD_SELECT
    buffer_size: int = DEFAULT_BUFFER_SIZE


class _Job:
    """A rocprofv3 job: its fields are the job's keys, in the order they are written."""

    def yaml_doc(self) -> dict[str, object]:
        # The one place a job is a plain mapping: what yaml.safe_dump writes into input.yaml
        # (and what --flags spells as options). An option left unset (None) is not written.
        return {k: v for k, v in self.__dict__.items() if v is not None}


@record
class AttJob(_Job):
    kernel_include_regex: str
    kernel_iteration_range: str
    output_directory: str
    output_file: str
    output_format: list[str]
    kernel_trace: bool  # resource counts (VGPR/SGPR/LDS) for the occupancy analysis
    advanced_thread_trace: bool
    att_target_cu: int
    att_shader_engine_mask: str  # "0x..."
    att_simd_select: str
    att_buffer_size: str
    att_library_path: str | None  # None: rocprofv3 looks for the decoder itself


@record
class PmcJob(_Job):
    kernel_include_regex: str | None  # None: every kernel
    pmc: list[str]
    output_directory: str
    output_file: str
    output_format: list[str]


Job = AttJob | PmcJob


def att_job(regex: str, iteration_range: str, output_dir: Path, settings: AttSettings,
            library_path: str | None) -> AttJob:
    return AttJob(regex, iteration_range, str(output_dir), OUTPUT_FILE, ["csv"], True, True, settings.target_cu,
                  hex(settings.se_mask), hex(settings.simd_select), hex(settings.buffer_size), library_path or None)


def pmc_job(regex: str | None, counters: tuple[str, ...], output_dir: Path) -> PmcJob:
    return PmcJob(regex or None, list(counters), str(output_dir), OUTPUT_FILE, ["csv"])


def input_yaml(jobs: Sequence[Job]) -> str:
    text: str = yaml.safe_dump({"jobs": [j.yaml_doc() for j in jobs]}, sort_keys=False, default_flow_style=None,
                          width=10_000)
    return text


def flags(job: Job) -> list[str]:
    """The same job as rocprofv3 command-line options (for releases where `-i` misbehaves)."""
    argv: list[str] = []
    for key, value in job.yaml_doc().items():
        opt = _FLAG[key]
        if value is True:
            argv.append(opt)  # boolean switches take no value (`--att VALUE` is rejected)
        elif isinstance(value, list):
            argv += [opt, *map(str, value)]
        else:
            argv += [opt, str(value)]
    return argv


def discovery_argv(rocprofv3: str, output_dir: Path) -> list[str]:
    return [rocprofv3, "--stats", "--kernel-trace", "-f", "csv", "-d", str(output_dir),
            "-o", DISCOVER_OUTPUT_FILE]
