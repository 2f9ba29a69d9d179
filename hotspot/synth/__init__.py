"""Synthetic ATT ui_output dispatch directories for tests, benchmarks and the bundled example."""

from hotspot.synth.spec import (
                                DispatchSpec,
                                ExplicitProgram,
                                Instr,
                                InstructionMix,
                                LatencyModel,
                                Layout,
                                Loop,
                                SourceSpec,
)
from hotspot.synth.writer import make_dispatch, wave_bytes_estimate

__all__ = ["DispatchSpec", "ExplicitProgram", "Instr", "InstructionMix", "LatencyModel", "Layout", "Loop",
           "SourceSpec", "make_dispatch", "wave_bytes_estimate"]
