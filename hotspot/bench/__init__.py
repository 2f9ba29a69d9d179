"""Benchmark support for scripts/bench.py: timing whole processes, cached synthetic inputs, the
speed/memory targets of issue 9 and the report. Not imported by the CLI."""
