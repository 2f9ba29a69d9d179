"""Kernel-level traces: readers for kernel stats/trace CSVs, rocpd and rocm-trace-lite databases,
the dispatch model, per-kernel aggregation, marker (phase) regions and kernel regexes."""
