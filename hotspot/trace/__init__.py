"""Kernel-level analysis (`hotspot kernels`): per-kernel aggregation, families, marker (phase)
regions and kernel regexes over the records the capture layer reads (hotspot/capture/trace)."""
